import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareDecimals } from '#domain/commons/decimal';

const digits = (maxLength: number, minLength = 0) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength });

/** Every shape the spec's amount pattern allows: sign, 0 or 1..13 digits, optional '.' and 0..8 digits. */
const amount = fc
  .record({
    negative: fc.boolean(),
    integer: fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 10n ** 13n - 1n }).map(String)),
    fraction: fc.option(digits(8), { nil: undefined }),
  })
  .map(
    ({ negative, integer, fraction }) =>
      `${negative ? '-' : ''}${integer}${fraction === undefined ? '' : `.${fraction}`}`,
  );

/** Any decimal string, with leading zeros and fractions far past 8 digits. */
const longDecimal = fc
  .record({
    negative: fc.boolean(),
    integer: digits(30, 1),
    fraction: fc.option(digits(40), { nil: undefined }),
  })
  .map(
    ({ negative, integer, fraction }) =>
      `${negative ? '-' : ''}${integer}${fraction === undefined ? '' : `.${fraction}`}`,
  );

/** The model: the value as an integer count of 10^-scale, in BigInt arithmetic. */
const scaled = (value: string, scale: number): bigint => {
  const negative = value.startsWith('-');
  const [integer = '', fraction = ''] = value.replace('-', '').split('.');
  const magnitude = BigInt(integer + fraction.padEnd(scale, '0'));
  return negative ? -magnitude : magnitude;
};

const modelCompare = (a: string, b: string): number => {
  const scale = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  const [x, y] = [scaled(a, scale), scaled(b, scale)];
  return x === y ? 0 : x < y ? -1 : 1;
};

describe('compareDecimals', () => {
  it.each([
    ['0', '-0', 0],
    ['-0.00000000', '0.0', 0],
    ['5.', '5', 0],
    ['5.', '5.00000000', 0],
    ['1.50', '1.5', 0],
    ['0.00000001', '0', 1],
    ['-0.00000001', '-0', -1],
    ['10', '9.99999999', 1],
    ['-10', '-9.99999999', -1],
    ['0.1', '0.09999999', 1],
    ['9999999999999.99999999', '9999999999999.99999998', 1],
    ['-9999999999999.99999999', '9999999999999.99999999', -1],
    ['-9999999999999.99999999', '-9999999999999.99999998', -1],
    ['1000000000000', '999999999999.99999999', 1],
    // 0.1 + 0.2 in binary floating point is 0.30000000000000004.
    ['0.30000000000000004', '0.3', 1],
    ['0.12345678901234567890123', '0.12345678901234567890124', -1],
    ['007', '7', 0],
  ] as const)('compares %s with %s as %i', (a, b, expected) => {
    expect(compareDecimals(a, b)).toBe(expected);
    expect(compareDecimals(b, a)).toBe(-expected || 0);
  });

  it('generates only amounts the spec pattern accepts', () => {
    // The spec's own pattern: stored amounts may end in '.' (accepted before the service's
    // AMOUNT_PATTERN required a digit), and the list still compares them.
    const specPattern = /^-?([0]|([1-9][0-9]{0,12}))([.][0-9]{0,8})?$/;
    fc.assert(fc.property(amount, (value) => specPattern.test(value)));
  });

  it('orders every pair of spec amounts as exact decimal arithmetic does', () => {
    fc.assert(
      fc.property(amount, amount, (a, b) => compareDecimals(a, b) === modelCompare(a, b)),
      {
        numRuns: 5000,
      },
    );
  });

  it('orders decimals with leading zeros and many fractional digits exactly', () => {
    fc.assert(
      fc.property(longDecimal, longDecimal, (a, b) => compareDecimals(a, b) === modelCompare(a, b)),
      { numRuns: 2000 },
    );
  });

  it('finds a value equal to itself written with trailing zeros, and never equal to a neighbour', () => {
    fc.assert(
      fc.property(amount, fc.integer({ min: 0, max: 10 }), (value, zeros) => {
        const padded = value.includes('.') ? `${value}${'0'.repeat(zeros)}` : `${value}.${'0'.repeat(zeros)}`;
        return compareDecimals(value, padded) === 0 && compareDecimals(`${padded}1`, padded) !== 0;
      }),
    );
  });

  it('refuses text that is not a decimal rather than guessing', () => {
    for (const value of ['', '-', '.5', '1e5', '+5', '1,5', 'abc', ' 1', 'NaN']) {
      expect(() => compareDecimals(value, '1'), value).toThrow(RangeError);
    }
  });
});
