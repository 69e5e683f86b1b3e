/**
 * Exact comparison of decimal strings such as amounts (spec 2.1), digit by digit: an amount
 * never passes through binary floating point, where 0.1 + 0.2 is not 0.3 and 16 digits is the end.
 */

const DECIMAL = /^(-?)([0-9]+)(?:\.([0-9]*))?$/;

interface Decimal {
  negative: boolean;
  /** Integer digits without leading zeros ('' for zero). */
  integer: string;
  /** Fraction digits without trailing zeros ('' for none). */
  fraction: string;
}

const parseDecimal = (value: string): Decimal => {
  const match = DECIMAL.exec(value);
  if (match === null) throw new RangeError(`Not a decimal number: '${value}'`);
  const integer = (match[2] ?? '').replace(/^0+/, '');
  const fraction = (match[3] ?? '').replace(/0+$/, '');
  // Zero has no sign: "-0" and "-0.00" equal "0".
  return { negative: match[1] === '-' && (integer !== '' || fraction !== ''), integer, fraction };
};

const compareDigits = (a: string, b: string): number => (a === b ? 0 : a < b ? -1 : 1);

const compareMagnitudes = (a: Decimal, b: Decimal): number => {
  if (a.integer.length !== b.integer.length) return a.integer.length < b.integer.length ? -1 : 1;
  const integers = compareDigits(a.integer, b.integer);
  if (integers !== 0) return integers;
  const length = Math.max(a.fraction.length, b.fraction.length);
  return compareDigits(a.fraction.padEnd(length, '0'), b.fraction.padEnd(length, '0'));
};

export const isDecimal = (value: string): boolean => DECIMAL.test(value);

/**
 * Compares two decimal strings (an optional '-', digits, optionally '.' and digits; "5." is 5):
 * negative when a < b, 0 when they are equal in value ("1.50" and "1.5"), positive when a > b.
 */
export const compareDecimals = (a: string, b: string): -1 | 0 | 1 => {
  const left = parseDecimal(a);
  const right = parseDecimal(b);
  if (left.negative !== right.negative) return left.negative ? -1 : 1;
  const magnitude = compareMagnitudes(left, right);
  if (magnitude === 0) return 0;
  return (left.negative ? -magnitude : magnitude) < 0 ? -1 : 1;
};

/**
 * The exact sum of non-negative decimal strings (amounts), with as many fraction digits as the
 * longest of them: "3150.25" and "2250.5" make "5400.75", "10.50" and "2" make "12.50".
 */
export const sumDecimals = (amounts: readonly string[]): string => {
  const places = Math.max(0, ...amounts.map((amount) => (amount.split('.')[1] ?? '').length));
  const total = amounts.reduce((sum, amount) => {
    const { integer, fraction } = parseDecimal(amount);
    return sum + BigInt(`${integer}${fraction.padEnd(places, '0')}` || '0');
  }, 0n);
  const digits = total.toString().padStart(places + 1, '0');
  return places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
};
