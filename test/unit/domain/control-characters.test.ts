import { describe, expect, it } from 'vitest';
import { idempotencyKey } from '#api/request-headers';
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

/** Characters that make text show otherwise than it reads, or hide in an identifier. */
const BIDI_OVERRIDES = [
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
];
const SEPARATORS = ['\u2028', '\u2029'];
const INVISIBLE = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u2060',
  '\ufeff',
  '\u00a0',
  '\u3000',
  '\u00ad',
  '\ue000',
];

describe('identifiers show every character they hold; no text hides its direction', () => {
  const IDENTIFIERS: [string, (value: string) => Record<string, unknown>][] = [
    ['debtorAccountId', (value) => minimalCreditTransfer({ debtorAccountId: `001${value}2` })],
    ['creditorAccountId', (value) => minimalCreditTransfer({ creditorAccountId: `001${value}2` })],
    [
      'identifiers[0].number',
      (value) => minimalCreditTransfer({ identifiers: [{ number: `E2E${value}1` }] }),
    ],
    [
      'creditor.account.accountNumber',
      (value) => minimalCreditTransfer({ creditor: { account: { accountNumber: `12${value}34` } } }),
    ],
  ];

  it.each(IDENTIFIERS)('%s refuses format, invisible and separator characters', (name, bodyWith) => {
    expect(refusedFields(creditTransferRequestSchema, bodyWith('-plain id'))).toEqual([]);
    for (const character of [...BIDI_OVERRIDES, ...SEPARATORS, ...INVISIBLE]) {
      expect(refusedFields(creditTransferRequestSchema, bodyWith(character)), hex(character)).toEqual([name]);
    }
  });

  it('the headers and filters that identify refuse them too', () => {
    for (const character of [...BIDI_OVERRIDES, ...SEPARATORS, ...INVISIBLE]) {
      expect(refusedFields(servicerHeadersSchema, { servicerId: `S${character}1` }), hex(character)).toEqual([
        'servicerId',
      ]);
      expect(
        refusedFields(listCreditTransfersQuerySchema, { 'debtorAccountId.eq': `001${character}2` }),
        hex(character),
      ).toEqual(['debtorAccountId.eq']);
    }
  });

  it('free text and names refuse bidi overrides and separators, and keep the marks a script needs', () => {
    for (const character of [...BIDI_OVERRIDES, ...SEPARATORS]) {
      expect(
        refusedFields(
          creditTransferRequestSchema,
          minimalCreditTransfer({ purpose: `Invoice ${character}118` }),
        ),
        hex(character),
      ).toEqual(['purpose']);
      expect(
        refusedFields(
          creditTransferRequestSchema,
          minimalCreditTransfer({ debtor: { name: `Ali${character}ce` } }),
        ),
        hex(character),
      ).toEqual(['debtor.name']);
      expect(refusedFields(cancellationRequestSchema, { cancellationReason: `a${character}b` })).toEqual([
        'cancellationReason',
      ]);
    }
    // Right-to-left and zero-width joining marks are part of writing some names.
    for (const name of ['\u05e9\u05dc\u05d5\u05dd\u200f Ltd', 'क्\u200dष', 'Zürich Straße 5', '中文 😀']) {
      expect(refusedFields(creditTransferRequestSchema, minimalCreditTransfer({ debtor: { name } }))).toEqual(
        [],
      );
    }
  });
});

describe('idempotency keys are visible ASCII', () => {
  it('refuses anything else, and accepts every visible ASCII character', () => {
    for (const key of ['café', 'caf\u00c3\u00a9', 'a b', 'key\u200b', '\u00a0key', 'ключ', '😀']) {
      expect(refusedFields(idempotencyKeySchema, key), key).toEqual(['(body)']);
    }
    const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, offset) =>
      String.fromCharCode(0x21 + offset),
    );
    for (let start = 0; start < visible.length; start += 36) {
      expect(refusedFields(idempotencyKeySchema, visible.slice(start, start + 36).join(''))).toEqual([]);
    }
  });
});

describe('an idempotency header that is not visible ASCII', () => {
  it.each([
    ['idempotencyId', 'caf\u00c3\u00a9'],
    ['Idempotency-Key', 'caf\u00e9'],
  ])('is a 400 naming %s (UTF-8 bytes read as Latin-1, or Latin-1 itself)', (header, value) => {
    const event = { headers: { [header]: value }, multiValueHeaders: { [header]: [value] } };
    try {
      idempotencyKey(event as unknown as Parameters<typeof idempotencyKey>[0]);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).invalidParams).toEqual([
        { name: header, reason: 'must be visible ASCII characters only (U+0021-U+007E), no space' },
      ]);
    }
  });
});
