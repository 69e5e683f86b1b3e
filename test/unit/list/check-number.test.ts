import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCheckNumbers } from '#domain/commons/check-number';

const digitString = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 30 });
const withNonDigit = fc
  .tuple(
    fc.string({ maxLength: 10 }),
    fc.constantFrom('A', 'b', '-', ' ', '/', ':', 'é'),
    fc.string({ maxLength: 10 }),
  )
  .map(([before, nonDigit, after]) => `${before}${nonDigit}${after}`);

describe('compareCheckNumbers', () => {
  it.each([
    ['000123', '123', 0],
    ['0', '000', 0],
    ['9', '10', -1],
    ['0099', '100', -1],
    ['123456789012345678901234567890', '123456789012345678901234567889', 1],
    ['A1', 'A2', -1],
    ['A10', 'A9', -1],
    ['10', '9A', -1],
    ['b', 'B', 1],
    ['CHK-7', 'CHK-7', 0],
  ] as const)('compares %s with %s as %i', (a, b, expected) => {
    expect(compareCheckNumbers(a, b)).toBe(expected);
    expect(compareCheckNumbers(b, a)).toBe(-expected || 0);
  });

  it('orders digit strings by their value, whatever their leading zeros', () => {
    fc.assert(
      fc.property(digitString, digitString, (a, b) => {
        const [x, y] = [BigInt(a), BigInt(b)];
        return compareCheckNumbers(a, b) === (x === y ? 0 : x < y ? -1 : 1);
      }),
      { numRuns: 2000 },
    );
  });

  it('orders anything else by ordinal string order', () => {
    fc.assert(
      fc.property(fc.oneof(withNonDigit, digitString), withNonDigit, (a, b) => {
        const expected = a === b ? 0 : a < b ? -1 : 1;
        return compareCheckNumbers(a, b) === expected && compareCheckNumbers(b, a) === (-expected || 0);
      }),
      { numRuns: 2000 },
    );
  });
});
