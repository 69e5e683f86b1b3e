import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '#domain/commons/errors';
import { parseOrThrow } from '#domain/commons/validation';
import { cancellationRequestSchema } from '#domain/credit-transfers/cancel-credit-transfer';
import {
  creditTransferRequestSchema,
  idempotencyKeySchema,
  servicerHeadersSchema,
} from '#domain/credit-transfers/credit-transfer';
import { listCreditTransfersQuerySchema } from '#domain/credit-transfers/list-filters';
import { minimalCreditTransfer } from '../../fixtures/credit-transfers.ts';

/** C0 (U+0000-U+001F), DEL and C1 (U+0080-U+009F): 65 characters. */
const CONTROL_CHARACTERS = [
  ...Array.from({ length: 0x20 }, (_, code) => code),
  ...Array.from({ length: 0x21 }, (_, offset) => 0x7f + offset),
].map((code) => String.fromCodePoint(code));
const LINE_FEED_AND_TAB = ['\n', '\t'];

const hex = (character: string) => `U+${(character.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;

const refusedFields = (schema: Parameters<typeof parseOrThrow>[0], input: unknown): string[] => {
  try {
    parseOrThrow(schema, input, 'not valid');
    return [];
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    return error.invalidParams.map(({ name }) => name);
  }
};

/** Text fields at every depth of a transfer, as a body with the value put there. */
const TEXT_FIELDS: [string, (value: string) => Record<string, unknown>][] = [
  ['paymentMethod', (value) => minimalCreditTransfer({ paymentMethod: `Credit${value}Transfer` })],
  ['debtorAccountId', (value) => minimalCreditTransfer({ debtorAccountId: `001${value}` })],
  ['identifiers[0].number', (value) => minimalCreditTransfer({ identifiers: [{ number: `E2E${value}` }] })],
  ['debtor.name', (value) => minimalCreditTransfer({ debtor: { name: `Example${value}Corp` } })],
  [
    'creditor.postalAddress.addressLine[1]',
    (value) =>
      minimalCreditTransfer({ creditor: { postalAddress: { addressLine: ['Main St 1', `B${value}`] } } }),
  ],
  [
    'creditor.agent.identifiers[0].issuer',
    (value) => minimalCreditTransfer({ creditor: { agent: { identifiers: [{ issuer: `${value}` }] } } }),
  ],
];

describe('control characters are refused in every text field, the field named', () => {
  it.each(TEXT_FIELDS)('%s', (name, bodyWith) => {
    expect(refusedFields(creditTransferRequestSchema, bodyWith('plain'))).toEqual([]);
    for (const character of CONTROL_CHARACTERS) {
      expect(refusedFields(creditTransferRequestSchema, bodyWith(character)), hex(character)).toEqual([name]);
    }
  });

  it('lets line feed and tab into the free text of purpose and cancellationReason only', () => {
    for (const character of CONTROL_CHARACTERS) {
      const allowed = LINE_FEED_AND_TAB.includes(character);
      const purpose = `Invoice 118${character}and 119`;
      expect(
        refusedFields(creditTransferRequestSchema, minimalCreditTransfer({ purpose })),
        hex(character),
      ).toEqual(allowed ? [] : ['purpose']);
      expect(
        refusedFields(cancellationRequestSchema, { cancellationReason: purpose }),
        hex(character),
      ).toEqual(allowed ? [] : ['cancellationReason']);
    }
  });

  it('says why', () => {
    try {
      parseOrThrow(
        creditTransferRequestSchema,
        minimalCreditTransfer({ paymentMethod: 'a\u0000' }),
        'not valid',
      );
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidRequestError).invalidParams).toEqual([
        {
          name: 'paymentMethod',
          reason: 'must not contain control characters (U+0000-U+001F, U+007F-U+009F)',
        },
      ]);
    }
  });

  it('applies to the headers and the list filters that are text', () => {
    for (const character of CONTROL_CHARACTERS) {
      expect(refusedFields(servicerHeadersSchema, { servicerId: `S${character}` }), hex(character)).toEqual([
        'servicerId',
      ]);
      expect(refusedFields(idempotencyKeySchema, `key${character}`), hex(character)).toEqual(['(body)']);
      expect(
        refusedFields(listCreditTransfersQuerySchema, { 'checkType.eq': `Business${character}` }),
        hex(character),
      ).toEqual(['checkType.eq']);
    }
  });

  it('accepts the characters either side of the ranges and all other text', () => {
    for (const text of ['~', '\u00a0', 'é', '中', '😀', 'Zürich Straße 5']) {
      expect(
        refusedFields(creditTransferRequestSchema, minimalCreditTransfer({ paymentMethod: text })),
      ).toEqual([]);
    }
  });
});
