import type * as z from 'zod/mini';
import { RESPONSE_ONLY_FIELDS } from '../credit-transfers/credit-transfer-status.ts';
import { type InvalidParam, InvalidRequestError } from './errors.ts';

const fieldName = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((name, key) => {
    if (typeof key === 'number') return `${name}[${key}]`;
    return name === '' ? String(key) : `${name}.${String(key)}`;
  }, '');

const responseOnly: ReadonlySet<string> = new Set(RESPONSE_ONLY_FIELDS);

const unknownKeyReason = (path: readonly PropertyKey[], key: string): string =>
  path.length === 0 && responseOnly.has(key)
    ? 'is set by the service and must not be sent'
    : 'is not a known field';

/**
 * Turns zod issues into the `invalidParams` of a 400, one entry per offending field: a field that
 * breaks two checks (a currency `EURO` is both too long and not three letters) is named once, with
 * the first reason.
 */
export const toInvalidParams = (
  issues: readonly z.core.$ZodIssue[],
  prefix: PropertyKey[] = [],
): InvalidParam[] =>
  onePerField(
    issues.flatMap((issue) => {
      const path = [...prefix, ...issue.path];
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => ({
          name: fieldName([...path, key]),
          reason: unknownKeyReason(path, key),
        }));
      }
      return [{ name: fieldName(path) || '(body)', reason: issue.message }];
    }),
  );

const onePerField = (params: InvalidParam[]): InvalidParam[] => {
  const seen = new Set<string>();
  return params.filter(({ name }) => !seen.has(name) && seen.add(name) !== undefined);
};

/**
 * Parses `input` or throws an InvalidRequestError naming every offending field.
 * `prefix` names where the input came from (for example a header or query parameter).
 */
export const parseOrThrow = <S extends z.ZodMiniType>(
  schema: S,
  input: unknown,
  description: string,
  prefix: PropertyKey[] = [],
): z.output<S> => {
  const result = schema.safeParse(input, {
    error: (issue) => (issue.input === undefined ? 'is required' : undefined),
  });
  if (result.success) return result.data;
  throw new InvalidRequestError(description, toInvalidParams(result.error.issues, prefix));
};
