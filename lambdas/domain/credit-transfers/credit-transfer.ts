import * as z from 'zod/mini';
import { STATUS_REASON_CODES } from '../iso20022/status-codes.ts';
import { CODE_SET_RELEASE } from '../iso20022/status-reason-code-set.ts';
import { CREDIT_TRANSFER_STATUSES } from './credit-transfer-status.ts';

export { type CreditTransferStatus, FINAL_STATUSES } from './credit-transfer-status.ts';

import {
  atMostCharacters,
  boundedText,
  described,
  freeText,
  identifierText,
  patternLength,
  visibleAsciiKey,
} from '../commons/text.ts';

/**
 * The credit transfer of spec section 2, as zod schemas: the single source of request
 * validation, of the TypeScript types and of the OpenAPI document.
 * Every object is strict: a misspelt field on a payment is an error, never ignored.
 */

/**
 * Spec 2.1 amount pattern (up to 13 integer and 8 fractional digits, as a string), except that
 * an amount ends in a digit: the spec's `{0,8}` lets `1.` through, which no bank writes.
 */
export const AMOUNT_PATTERN = /^-?([0]|([1-9][0-9]{0,12}))([.][0-9]{1,8})?$/;

const text = boundedText;
/** ISO's ExternalStatusReason1Code, every code of the set the service reads (status-reason-code-set.ts). */
const STATUS_REASON_CODE_SCHEMA = z.enum(STATUS_REASON_CODES);
export const statusReasonCodeSchema = () => STATUS_REASON_CODE_SCHEMA;
/**
 * Nested free text the spec leaves unbounded (2.5): ISO 20022 Max140Text. One instance for its
 * 80-odd fields (zod schemas never change once made), not one built per field.
 */
const NESTED_TEXT = text(1, 140);
const nestedText = () => NESTED_TEXT;
/** A nested field that identifies (a number of an identifier, an account or routing number). */
const NESTED_IDENTIFIER = identifierText(1, 140);
const nestedIdentifier = () => NESTED_IDENTIFIER;
const isoDate = () => z.iso.date().check(patternLength('YYYY-MM-DD'.length));
/** Nanosecond fraction plus offset fit in 35 characters. */
const isoDateTime = () =>
  z.iso.datetime({ offset: true }).check(
    atMostCharacters(35),
    // Its UTC date must be a four-digit year too, or date filters could not compare it.
    z.refine((value) => {
      const year = new Date(value).getUTCFullYear();
      return year >= 1 && year <= 9999;
    }, 'must fall between the years 0001 and 9999 in UTC'),
  );
const list = <T extends z.ZodMiniType>(item: T) => z.array(item).check(z.maxLength(10));
/** An object whose fields are all optional and which refuses unknown ones. */
const partialObject = <T extends z.core.$ZodLooseShape>(shape: T) => z.partial(z.strictObject(shape));
const named = <T extends z.ZodMiniType>(schema: T, id: string): T => schema.check(z.meta({ id }));

/*
 * The field schemas below are built at their first parse, or when the document describes them:
 * building zod schemas is a measured part of every cold start (docs/benchmarks.md), and most
 * functions that import this module parse one field of it, or none. zod keeps what a lazy built.
 * The header schemas at the end stay as they are: every operation that imports them reads them.
 */

export const amountSchema = z.lazy(() =>
  z
    .string()
    .check(
      atMostCharacters(23),
      z.regex(
        AMOUNT_PATTERN,
        'must be a decimal with up to 13 integer and 8 fractional digits, ending in a digit',
      ),
      z.describe(
        'Decimal number as a string, up to 13 integer and 8 fractional digits; it ends in a digit (`1.` is ' +
          "refused). With a currency, it has at most as many fractional digits as the currency's ISO 4217 " +
          'minor unit (EUR 2, JPY 0, BHD 3, CLF 4); a currency without one (XAU, XDR, ...) keeps 8.',
      ),
    ),
);

export const currencySchema = z.lazy(() =>
  z.string().check(
    z.length(3),
    z.regex(/^([A-Z]{3})?$/, 'must be three upper-case letters'),
    // Whether it is an active code is a rule of the initiation (money-rules.ts): only that
    // function carries the ISO 4217 data.
    z.describe(
      'Active ISO 4217 alphabetic currency code; XTS, XXX and withdrawn codes (HRK, BGN, ...) are refused.',
    ),
  ),
);

export const countryCodeSchema = z.lazy(() =>
  z
    .string()
    .check(
      z.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code'),
      patternLength(2),
      z.describe('ISO 3166-1 alpha-2 country code.'),
    ),
);

export const accountIdSchema = z.lazy(() =>
  described(
    identifierText(1, 36),
    'Account identifier assigned by the servicer: a UUID or a composite branch-type-subtype-number.',
  ),
);
export const paymentIdSchema = z.lazy(() =>
  described(identifierText(1, 36), 'Identification of the payment.'),
);
/** Free text a person writes: the one kind of text where line feed and tab are allowed. */
export const descriptionSchema = z.lazy(() => freeText(1, 1025));

/** An optional field with a description. */
const optional = <T extends z.ZodMiniType>(schema: T, description?: string) =>
  description === undefined ? z.optional(schema) : described(z.optional(schema), description);

/**
 * An amount as the service may answer it: the spec's own pattern, `5.` included, since transfers
 * accepted before amounts had to end in a digit are listed and reported as they were sent.
 */
export const storedAmountSchema = z.lazy(() =>
  z
    .string()
    .check(
      atMostCharacters(23),
      z.regex(/^-?([0]|([1-9][0-9]{0,12}))([.][0-9]{0,8})?$/),
      z.describe(
        'Decimal number as a string, up to 13 integer and 8 fractional digits, exactly as it was sent.',
      ),
    ),
);

export const creditTransferStatusSchema = z.lazy(() =>
  named(z.enum(CREDIT_TRANSFER_STATUSES), 'CreditTransferStatus'),
);

/**
 * The request and the transfer as answered, with every nested object of spec section 2. Built
 * once, at first use: building them was most of this module's load time (10-25 ms of a cold
 * start on the bench machine, docs/benchmarks.md), and only the initiation, the lifecycle's
 * check of a stored transfer and the OpenAPI document parse or describe them; the status, list,
 * cancellation and token functions never do.
 */
function buildTransferSchemas() {
  const paymentIdentification = named(
    partialObject({ number: nestedIdentifier(), schemeName: nestedText(), issuer: nestedText() }),
    'PaymentIdentification',
  );

  const genericTransactionCode = named(
    partialObject({ codeType: nestedText(), name: nestedText(), value: nestedText() }),
    'GenericTransactionCode',
  );

  const partyIdentifier = named(
    partialObject({
      number: nestedIdentifier(),
      schemeName: nestedText(),
      issuer: nestedText(),
      issueDate: isoDate(),
      expirationDate: isoDate(),
    }),
    'PartyIdentifier',
  );

  const agentIdentifier = named(
    partialObject({
      number: nestedIdentifier(),
      issuer: nestedText(),
      country: countryCodeSchema,
      countrySubdivisionCode: nestedText(),
      displayOption: nestedText(),
      schemeName: nestedText(),
      issueDate: isoDate(),
      applyDate: isoDate(),
      expirationDate: isoDate(),
      verificationDate: isoDate(),
      // Spelled so in the specification.
      foreingIDIndicator: z.boolean(),
      taxIDIndicator: z.boolean(),
    }),
    'AgentIdentifier',
  );

  const postalAddress = named(
    partialObject({
      addressCode: nestedText(),
      addressBookIndicator: nestedText(),
      addressType: nestedText(),
      addressPurpose: nestedText(),
      careOf: nestedText(),
      department: nestedText(),
      subDepartment: nestedText(),
      streetName: nestedText(),
      firstCrossStreetName: nestedText(),
      secondCrossStreetName: nestedText(),
      buildingNumber: nestedText(),
      buildingName: nestedText(),
      floor: nestedText(),
      postBox: nestedText(),
      room: nestedText(),
      postCode: nestedText(),
      carrierRoute: nestedText(),
      censusTract: nestedText(),
      censusBlock: nestedText(),
      cBSACode: nestedText(),
      cBSAType: nestedText(),
      townName: nestedText(),
      townLocationName: nestedText(),
      districtName: nestedText(),
      countyName: nestedText(),
      countrySubDivision: nestedText(),
      countrySubDivisionCode: nestedText(),
      country: countryCodeSchema,
      primaryIndicator: z.boolean(),
      foreignIndicator: z.boolean(),
      temporaryIndicator: z.boolean(),
      addressLine: list(nestedText()),
      period: partialObject({ fromDateTime: isoDateTime(), upToDateTime: isoDateTime() }),
      codes: list(partialObject({ name: nestedText(), value: nestedText(), description: nestedText() })),
      identifiers: list(partyIdentifier),
    }),
    'PostalAddress',
  );

  const account = named(
    partialObject({
      name: nestedText(),
      currency: currencySchema,
      accountBranchId: nestedIdentifier(),
      // Spec 2.2: an account number (BBAN) has at most 30 characters.
      accountNumber: identifierText(1, 30),
      accountType: nestedText(),
      routingNumber: nestedIdentifier(),
      identifiers: list(paymentIdentification),
    }),
    'Account',
  );

  const agent = named(
    partialObject({
      identifiers: list(agentIdentifier),
      clearingSystemMemberIdentification: nestedText(),
      memberIdentification: nestedText(),
      name: nestedText(),
      postalAddress,
    }),
    'Agent',
  );

  const partyIdentificationSchema = named(
    partialObject({
      name: nestedText(),
      account,
      postalAddress,
      agent,
      placeAndDateOfBirth: partialObject({
        countrySubdivision: nestedText(),
        townName: nestedText(),
        country: countryCodeSchema,
        birthDate: isoDate(),
      }),
      contact: partialObject({
        contactMethods: list(partialObject({ channelType: nestedText(), identification: nestedText() })),
        preferredMethod: nestedText(),
        preferredLanguage: nestedText(),
      }),
      identifiers: list(partyIdentifier),
      countryOfResidence: countryCodeSchema,
    }),
    'PartyIdentification',
  );

  const checkFields = (amount: z.ZodMiniType<string>) => ({
    checkType: nestedText(),
    amount,
    currency: currencySchema,
    checkNumber: nestedText(),
    availabilityDate: isoDateTime(),
    availabilityFloat: nestedText(),
  });

  /** Fields a client sends; also the first part of every credit transfer response. */
  const creditTransferFields = {
    identifiers: optional(list(paymentIdentification)),
    domain: optional(text(1, 35), 'Bank transaction code domain, e.g. Payments.'),
    family: optional(text(1, 60), 'Bank transaction family, e.g. IssuedCreditTransfers.'),
    subFamily: optional(text(1, 60), 'Bank transaction subfamily.'),
    codes: optional(list(genericTransactionCode)),
    paymentMethod: described(text(1, 35), 'Means of payment, e.g. CreditTransfer.'),
    paymentType: optional(text(1, 35), 'e.g. LiquidityTransfer, OnUs, On-Us, ACH, Wire, NotOnUs.'),
    amount: amountSchema,
    paymentReason: optional(text(1, 60), 'Underlying reason for the payment.'),
    debtorAccountId: accountIdSchema,
    creditorAccountId: optional(accountIdSchema),
    purpose: optional(descriptionSchema, 'Free-text description; line feed and tab are allowed.'),
    paymentProcessing: optional(
      partialObject({
        instructionPriority: nestedText(),
        serviceLevel: nestedText(),
        clearingChannel: nestedText(),
        localInstrument: nestedText(),
        categoryPurpose: nestedText(),
      }),
    ),
    chargeBearerType: optional(
      text(1, 35),
      'e.g. BorneByDebtor, BorneByCreditor, Shared, FollowingServiceLevel.',
    ),
    currency: optional(currencySchema),
    exchange: optional(
      partialObject({
        currency: currencySchema,
        exchangeFactor: z.string().check(
          atMostCharacters(23),
          z.regex(/^(0|[1-9][0-9]{0,12})([.][0-9]{1,9})?$/, 'must be a positive decimal'),
          z.refine((factor) => /[1-9]/.test(factor), 'must be greater than zero'),
        ),
      }),
    ),
    check: optional(partialObject(checkFields(amountSchema))),
    valueDate: optional(
      isoDate(),
      'Date (UTC) on which the payment must be executed: today or later, and at most 365 days after today ' +
        '(a setting of the service, `MAX_VALUE_DATE_DAYS`).',
    ),
    creditor: optional(partyIdentificationSchema),
    debtor: optional(partyIdentificationSchema),
    remittanceInformation: optional(
      partialObject({ remittanceNumber: nestedText(), documentType: nestedText() }),
    ),
  };

  const request = named(z.strictObject(creditTransferFields), 'CreditTransferRequest');
  const transfer = named(
    z.strictObject({
      ...creditTransferFields,
      amount: storedAmountSchema,
      check: optional(partialObject(checkFields(storedAmountSchema))),
      paymentId: paymentIdSchema,
      status: creditTransferStatusSchema,
      statusReason: optional(text(1, 35), 'Reason attached to the status, e.g. BlockedAccount.'),
      statusReasonCode: optional(
        statusReasonCodeSchema(),
        "The reason's ISO 20022 ExternalStatusReason1Code, present whenever `statusReason` is: e.g. AM04 " +
          '(InsufficientFunds), AC04, AC06, AG01, RR04, CUST (RequestedByCustomer); NARR for a reason told ' +
          `in words. ISO's code set, release ${CODE_SET_RELEASE}; docs/iso20022.md.`,
      ),
      date: described(isoDateTime(), 'Timestamp of the status report.'),
      approval: optional(
        approvalViewSchema(),
        'Present when the transfer met an approval rule of its tenant: it is Pending until approved (docs/approvals.md).',
      ),
    }),
    'CreditTransfer',
  );
  return { request, transfer };
}

/** A transfer's approval as clients see it (its status, the list, events and webhooks). */
export const approvalViewSchema = () =>
  z.strictObject({
    rule: described(text(1, 100), 'The approval rule that holds the transfer.'),
    initiatingClientId: optional(
      text(1, 64),
      'The client that initiated the transfer: it may not decide on it (absent on transfers held before it was kept).',
    ),
    approvalsRequired: z.int().check(z.gte(1), z.lte(3)),
    approvals: z
      .array(
        z.strictObject({
          clientId: described(text(1, 64), 'The client that decided.'),
          decision: z.enum(['approve', 'reject']),
          reason: optional(descriptionSchema),
          at: isoDateTime(),
        }),
      )
      .check(z.maxLength(3)),
    expiresAt: described(
      isoDateTime(),
      'When the transfer is rejected (WaitingTimeExpired) unless approved.',
    ),
  });

let built: ReturnType<typeof buildTransferSchemas> | undefined;
const transferSchemas = () => {
  built ??= buildTransferSchemas();
  return built;
};

/** Each built at its first parse (or when the document describes it); zod keeps what it built. */
export const creditTransferRequestSchema = z.lazy(() => transferSchemas().request);
export type CreditTransferRequest = z.infer<typeof creditTransferRequestSchema>;

export const creditTransferSchema = z.lazy(() => transferSchemas().transfer);
export type CreditTransfer = z.infer<typeof creditTransferSchema>;

/** Optional headers common to every operation (spec section 4). */
export const servicerHeadersSchema = z.strictObject({
  servicerId: z.optional(identifierText(1, 36)),
  servicerBranchId: z.optional(identifierText(1, 36)),
});
export type ServicerHeaders = z.infer<typeof servicerHeadersSchema>;

export const idempotencyKeySchema = visibleAsciiKey(36);
