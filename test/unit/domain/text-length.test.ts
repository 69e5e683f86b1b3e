import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '#domain/commons/errors';
import { boundedText } from '#domain/commons/text';
import { parseOrThrow } from '#domain/commons/validation';
import { cancellationRequestSchema } from '#domain/credit-transfers/cancel-credit-transfer';
import { creditTransferRequestSchema } from '#domain/credit-transfers/credit-transfer';
import { minimalCreditTransfer } from '../../fixtures/credit-transfers.ts';

/** Spec 2.1: purpose and cancellationReason are "1..1025 characters". */
const DESCRIPTION_MAX = 1025;
const EMOJI = '\u{1F4B6}'; // one character, two UTF-16 code units

const reasonsFor = (body: unknown): string[] => {
  try {
    parseOrThrow(creditTransferRequestSchema, body, 'The request body is not valid');
    return [];
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    return error.invalidParams.map((param) => `${param.name}: ${param.reason}`);
  }
};

describe('length bounds count characters (Unicode code points)', () => {
  it.each([
    ['ASCII', 'a'],
    ['two-byte characters', 'é'],
    ['emoji (surrogate pairs)', EMOJI],
  ])('accept exactly the bound in %s and refuse one more', (_name, character) => {
    expect(reasonsFor(minimalCreditTransfer({ purpose: character.repeat(DESCRIPTION_MAX) }))).toEqual([]);
    expect(reasonsFor(minimalCreditTransfer({ purpose: character.repeat(DESCRIPTION_MAX + 1) }))).toEqual([
      `purpose: must be at most ${DESCRIPTION_MAX} characters`,
    ]);
  });

  it('bound the cancellation reason the same way', () => {
    expect(
      cancellationRequestSchema.safeParse({ cancellationReason: EMOJI.repeat(DESCRIPTION_MAX) }).success,
    ).toBe(true);
    expect(
      cancellationRequestSchema.safeParse({ cancellationReason: EMOJI.repeat(DESCRIPTION_MAX + 1) }).success,
    ).toBe(false);
  });

  it('count a combining sequence as the code points it is made of', () => {
    const schema = boundedText(1, 2);
    expect(schema.safeParse('e\u0301').success).toBe(true); // e + combining acute: two code points
    expect(schema.safeParse('e\u0301x').success).toBe(false);
  });

  it('keep the lower bound: an empty string is refused', () => {
    expect(boundedText(1, 36).safeParse('').success).toBe(false);
  });
});
