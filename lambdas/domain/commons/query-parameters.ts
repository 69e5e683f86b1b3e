import * as z from 'zod/mini';
import { type InvalidParam, InvalidRequestError } from './errors.ts';
import { boundedText, optionalField, patternLength } from './text.ts';
import { toInvalidParams } from './validation.ts';

/** Page size when the request names none: small answers unless a client asks for more. */
export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
/** Bound of the opaque list cursor, in and out. */
export const CURSOR_MAX_LENGTH = 1024;

/** `limit` and `cursor` as every list takes them (the list of transfers set the pattern). */
export const pagingParameters = (items: string) => ({
  cursor: optionalField(
    boundedText(1, CURSOR_MAX_LENGTH),
    'Opaque position to continue from: the `Pagination-Cursor` of the previous page, sent with the same filters.',
  ),
  limit: optionalField(
    z
      .string()
      .check(
        z.regex(
          /^(100|[1-9][0-9]?)$/,
          `must be an integer from 1 to ${MAX_LIMIT}, written without sign or leading zeros`,
        ),
        patternLength(String(MAX_LIMIT).length),
      ),
    `Number of ${items} per page, an integer from 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`,
  ),
});

export const limitOf = (limit: string | undefined): number =>
  limit === undefined ? DEFAULT_LIMIT : Number(limit);

/**
 * Parses a query string given as every value of every parameter. Unknown and repeated
 * parameters are refused, not ignored: a misspelt filter dropped silently answers with items the
 * client did not ask for.
 */
export const parseQuery = <S extends z.ZodMiniObject>(
  schema: S,
  parameters: Readonly<Record<string, readonly string[]>>,
): z.output<S> => {
  const known: ReadonlySet<string> = new Set(Object.keys(schema.shape));
  const problems: InvalidParam[] = [];
  const single: Record<string, string> = {};
  for (const [name, values] of Object.entries(parameters)) {
    if (!known.has(name)) problems.push({ name, reason: 'is not a known query parameter' });
    else if (values.length > 1) problems.push({ name, reason: 'must be given at most once' });
    else if (values[0] !== undefined) single[name] = values[0];
  }
  const parsed = schema.safeParse(single);
  if (!parsed.success) problems.push(...toInvalidParams(parsed.error.issues));
  if (problems.length > 0 || !parsed.success) {
    throw new InvalidRequestError('A query parameter is not valid', problems);
  }
  return parsed.data;
};
