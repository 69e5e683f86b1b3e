import type * as z from 'zod/mini';

/**
 * The service's own sentence for each kind of validation failure, in the words of the reasons
 * the schemas name themselves ("must be three upper-case letters"): an `invalidParams` reason
 * reads "<field> <reason>", never in the validation library's words.
 */

const article = (noun: string): string => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const typeName = (expected: string): string => TYPE_NAMES[expected] ?? article(expected);

const characters = (count: number | bigint): string =>
  Number(count) === 1 ? '1 character' : `${count} characters`;
const items = (count: number | bigint): string => (Number(count) === 1 ? '1 item' : `${count} items`);

const sizeOf = (origin: string, count: number | bigint): string =>
  origin === 'string'
    ? characters(count)
    : origin === 'array' || origin === 'set'
      ? items(count)
      : String(count);

const tooBig = (issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooBig>): string => {
  const size = sizeOf(issue.origin, issue.maximum as number);
  if (issue.origin === 'string' || issue.origin === 'array' || issue.origin === 'set') {
    if (issue.exact)
      return issue.origin === 'string' ? `must be exactly ${size}` : `must have exactly ${size}`;
    return issue.origin === 'string' ? `must be at most ${size}` : `must have at most ${size}`;
  }
  return issue.inclusive === false ? `must be less than ${size}` : `must be at most ${size}`;
};

const tooSmall = (issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooSmall>): string => {
  const size = sizeOf(issue.origin, issue.minimum as number);
  if (issue.origin === 'string' || issue.origin === 'array' || issue.origin === 'set') {
    if (issue.exact)
      return issue.origin === 'string' ? `must be exactly ${size}` : `must have exactly ${size}`;
    if (Number(issue.minimum) === 1) return 'must not be empty';
    return issue.origin === 'string' ? `must be at least ${size}` : `must have at least ${size}`;
  }
  return issue.inclusive === false ? `must be greater than ${size}` : `must be at least ${size}`;
};

const listed = (values: readonly unknown[]): string =>
  values.map((value) => JSON.stringify(value)).join(', ');

/** The reason for one issue; the input is missing when it is undefined. */
export const serviceReason = (issue: z.core.$ZodRawIssue): string => {
  if (issue.input === undefined && issue.code === 'invalid_type') return 'is required';
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${typeName(issue.expected)}`;
    case 'too_big':
      return tooBig(issue);
    case 'too_small':
      return tooSmall(issue);
    case 'invalid_format':
      return issue.format === 'regex' && issue.pattern !== undefined
        ? `must match the pattern ${issue.pattern}`
        : `must be ${article(issue.format)}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return 'is not a known field';
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${listed(issue.values)}`
        : `must be one of ${listed(issue.values)}`;
    case 'invalid_union':
      return 'does not match any of the accepted forms';
    case 'invalid_key':
      return 'has a key that is not valid';
    case 'invalid_element':
      return 'has an item that is not valid';
    default:
      return 'is not valid';
  }
};
