import { z } from 'zod';
import { ISO_4217_CODES } from './currency-codes.ts';

/**
 * The credit transfer of spec section 2, as zod schemas: the single source of request
 * validation, of the TypeScript types and of the OpenAPI document.
 * Every object is strict: a misspelt field on a payment is an error, never ignored.
 */

/** Spec 2.1 amount pattern: up to 13 integer and 8 fractional digits, as a string. */
export const AMOUNT_PATTERN = /^-?([0]|([1-9][0-9]{0,12}))([.][0-9]{0,8})?$/;

const text = (min: number, max: number) => z.string().min(min).max(max);
/** Nested free text the spec leaves unbounded (2.5): ISO 20022 Max140Text. */
const nestedText = () => text(1, 140);
const isoDate = () => z.iso.date();
/** Nanosecond fraction plus offset fit in 35 characters. */
const isoDateTime = () =>
  z.iso
    .datetime({ offset: true })
    .max(35)
    // Its UTC date must be a four-digit year too, or date filters could not compare it.
    .refine((value) => {
      const year = new Date(value).getUTCFullYear();
      return year >= 1 && year <= 9999;
    }, 'must fall between the years 0001 and 9999 in UTC');
const list = <T extends z.ZodType>(item: T) => z.array(item).max(10);

export const amountSchema = z
  .string()
  .max(23)
  .regex(AMOUNT_PATTERN, 'must be a decimal with up to 13 integer and 8 fractional digits')
  .describe('Decimal number as a string, up to 13 integer and 8 fractional digits.');

export const currencySchema = z
  .string()
  .length(3)
  .regex(/^([A-Z]{3})?$/, 'must be three upper-case letters')
  .refine((code) => ISO_4217_CODES.has(code), 'must be an active ISO 4217 currency code')
  .describe('ISO 4217 alphabetic currency code.');

export const countryCodeSchema = z
  .string()
  .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
  .describe('ISO 3166-1 alpha-2 country code.');

export const accountIdSchema = text(1, 36).describe(
  'Account identifier assigned by the servicer: a UUID or a composite branch-type-subtype-number.',
);
export const paymentIdSchema = text(1, 36).describe('Identification of the payment.');
export const descriptionSchema = text(1, 1025);

const paymentIdentification = z
  .strictObject({ number: nestedText(), schemeName: nestedText(), issuer: nestedText() })
  .partial()
  .meta({ id: 'PaymentIdentification' });

const genericTransactionCode = z
  .strictObject({ codeType: nestedText(), name: nestedText(), value: nestedText() })
  .partial()
  .meta({ id: 'GenericTransactionCode' });

const partyIdentifier = z
  .strictObject({
    number: nestedText(),
    schemeName: nestedText(),
    issuer: nestedText(),
    issueDate: isoDate(),
    expirationDate: isoDate(),
  })
  .partial()
  .meta({ id: 'PartyIdentifier' });

const agentIdentifier = z
  .strictObject({
    number: nestedText(),
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
  })
  .partial()
  .meta({ id: 'AgentIdentifier' });

const postalAddress = z
  .strictObject({
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
    period: z.strictObject({ fromDateTime: isoDateTime(), upToDateTime: isoDateTime() }).partial(),
    codes: list(
      z.strictObject({ name: nestedText(), value: nestedText(), description: nestedText() }).partial(),
    ),
    identifiers: list(partyIdentifier),
  })
  .partial()
  .meta({ id: 'PostalAddress' });

const account = z
  .strictObject({
    name: nestedText(),
    currency: currencySchema,
    accountBranchId: nestedText(),
    // Spec 2.2: an account number (BBAN) has at most 30 characters.
    accountNumber: text(1, 30),
    accountType: nestedText(),
    routingNumber: nestedText(),
    identifiers: list(paymentIdentification),
  })
  .partial()
  .meta({ id: 'Account' });

const agent = z
  .strictObject({
    identifiers: list(agentIdentifier),
    clearingSystemMemberIdentification: nestedText(),
    memberIdentification: nestedText(),
    name: nestedText(),
    postalAddress,
  })
  .partial()
  .meta({ id: 'Agent' });

export const partyIdentificationSchema = z
  .strictObject({
    name: nestedText(),
    account,
    postalAddress,
    agent,
    placeAndDateOfBirth: z
      .strictObject({
        countrySubdivision: nestedText(),
        townName: nestedText(),
        country: countryCodeSchema,
        birthDate: isoDate(),
      })
      .partial(),
    contact: z
      .strictObject({
        contactMethods: list(
          z.strictObject({ channelType: nestedText(), identification: nestedText() }).partial(),
        ),
        preferredMethod: nestedText(),
        preferredLanguage: nestedText(),
      })
      .partial(),
    identifiers: list(partyIdentifier),
    countryOfResidence: countryCodeSchema,
  })
  .partial()
  .meta({ id: 'PartyIdentification' });

/** Fields a client sends; also the first part of every credit transfer response. */
export const creditTransferFields = {
  identifiers: list(paymentIdentification).optional(),
  domain: text(1, 35).optional().describe('Bank transaction code domain, e.g. Payments.'),
  family: text(1, 60).optional().describe('Bank transaction family, e.g. IssuedCreditTransfers.'),
  subFamily: text(1, 60).optional().describe('Bank transaction subfamily.'),
  codes: list(genericTransactionCode).optional(),
  paymentMethod: text(1, 35).describe('Means of payment, e.g. CreditTransfer.'),
  paymentType: text(1, 35).optional().describe('e.g. LiquidityTransfer, OnUs, On-Us, ACH, Wire, NotOnUs.'),
  amount: amountSchema,
  paymentReason: text(1, 60).optional().describe('Underlying reason for the payment.'),
  debtorAccountId: accountIdSchema,
  creditorAccountId: accountIdSchema.optional(),
  purpose: descriptionSchema.optional().describe('Free-text description.'),
  paymentProcessing: z
    .strictObject({
      instructionPriority: nestedText(),
      serviceLevel: nestedText(),
      clearingChannel: nestedText(),
      localInstrument: nestedText(),
      categoryPurpose: nestedText(),
    })
    .partial()
    .optional(),
  chargeBearerType: text(1, 35)
    .optional()
    .describe('e.g. BorneByDebtor, BorneByCreditor, Shared, FollowingServiceLevel.'),
  currency: currencySchema.optional(),
  exchange: z
    .strictObject({
      currency: currencySchema,
      exchangeFactor: z
        .string()
        .max(23)
        .regex(/^(0|[1-9][0-9]{0,12})([.][0-9]{1,9})?$/, 'must be a positive decimal')
        .refine((factor) => /[1-9]/.test(factor), 'must be greater than zero'),
    })
    .partial()
    .optional(),
  check: z
    .strictObject({
      checkType: nestedText(),
      amount: amountSchema,
      currency: currencySchema,
      checkNumber: nestedText(),
      availabilityDate: isoDateTime(),
      availabilityFloat: nestedText(),
    })
    .partial()
    .optional(),
  valueDate: isoDate().optional().describe('Date (UTC) on which the payment must be executed.'),
  creditor: partyIdentificationSchema.optional(),
  debtor: partyIdentificationSchema.optional(),
  remittanceInformation: z
    .strictObject({ remittanceNumber: nestedText(), documentType: nestedText() })
    .partial()
    .optional(),
};

/** Fields only the service sets; a request carrying one is refused. */
export const RESPONSE_ONLY_FIELDS = ['paymentId', 'status', 'statusReason', 'date'] as const;

export const creditTransferRequestSchema = z
  .strictObject(creditTransferFields)
  .meta({ id: 'CreditTransferRequest' });
export type CreditTransferRequest = z.infer<typeof creditTransferRequestSchema>;

export const creditTransferStatusSchema = z
  .enum([
    'Received',
    'AcceptedTechnicalValidation',
    'AcceptedCustomerProfile',
    'AcceptedSettlementInProcess',
    'AcceptedSettlementCompleted',
    'Rejected',
    'Cancelled',
  ])
  .meta({ id: 'CreditTransferStatus' });
export type CreditTransferStatus = z.infer<typeof creditTransferStatusSchema>;

export const FINAL_STATUSES: ReadonlySet<CreditTransferStatus> = new Set([
  'AcceptedSettlementCompleted',
  'Rejected',
  'Cancelled',
]);

export const creditTransferSchema = z
  .strictObject({
    ...creditTransferFields,
    paymentId: paymentIdSchema,
    status: creditTransferStatusSchema,
    statusReason: text(1, 35).optional().describe('Reason attached to the status, e.g. BlockedAccount.'),
    date: isoDateTime().describe('Timestamp of the status report.'),
  })
  .meta({ id: 'CreditTransfer' });
export type CreditTransfer = z.infer<typeof creditTransferSchema>;

/** Optional headers common to every operation (spec section 4). */
export const servicerHeadersSchema = z.strictObject({
  servicerId: text(1, 36).optional(),
  servicerBranchId: text(1, 36).optional(),
});
export type ServicerHeaders = z.infer<typeof servicerHeadersSchema>;

export const idempotencyKeySchema = text(1, 36);
