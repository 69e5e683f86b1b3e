/**
 * Check numbers are strings. Most are digits, often zero-padded ("000123"), and a client that
 * asks for numbers from 100 to 150 means numbers, not text; other check numbers have no
 * numeric meaning, so they compare as text.
 */

const DIGITS = /^[0-9]+$/;

const withoutLeadingZeros = (digits: string): string => digits.replace(/^0+/, '');

/**
 * Orders two check numbers: when both are digit strings, by their value (leading zeros do not
 * count, so "000123" equals "123"); otherwise by ordinal string order (UTF-16 code units,
 * case-sensitive). Negative when a comes first, 0 when equal, positive when a comes after.
 */
export const compareCheckNumbers = (a: string, b: string): -1 | 0 | 1 => {
  if (DIGITS.test(a) && DIGITS.test(b)) {
    const left = withoutLeadingZeros(a);
    const right = withoutLeadingZeros(b);
    if (left.length !== right.length) return left.length < right.length ? -1 : 1;
    return left === right ? 0 : left < right ? -1 : 1;
  }
  return a === b ? 0 : a < b ? -1 : 1;
};
