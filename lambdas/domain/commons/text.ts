import * as z from 'zod/mini';
import { serviceReason } from './reasons.ts';

// The reasons in a 400's `invalidParams` are the service's own sentences (reasons.ts), not the
// validation library's. Every schema module imports this one, so they are set before anything is
// parsed.
z.config({ localeError: serviceReason });

/**
 * "At most N characters" as the spec means it: Unicode code points, so 'é' and an emoji are
 * one character each, as JSON Schema's `maxLength` counts them. zod's `maxLength` counts code
 * points for strings (test/unit/domain/text.test.ts holds it to that).
 */
export const atMostCharacters = (maximum: number) => z.maxLength(maximum);

/**
 * Text without control characters (C0 U+0000-U+001F, DEL, C1 U+007F-U+009F): a NUL or an escape
 * sequence in a name or reference is never meant, and breaks the systems the payment goes to.
 * As a pattern, the document states it too.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: naming control characters is the point
export const WITHOUT_CONTROL_CHARACTERS = /^[^\u0000-\u001F\u007F-\u009F]*$/;
/** The same, with line feed and tab allowed: free text a person writes over several lines. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: naming control characters is the point
export const FREE_TEXT_WITHOUT_CONTROL_CHARACTERS = /^[^\u0000-\u0008\u000B-\u001F\u007F-\u009F]*$/;

const lengthChecks = (minimum: number, maximum: number) =>
  minimum > 0 ? [z.minLength(minimum), atMostCharacters(maximum)] : [atMostCharacters(maximum)];

/**
 * A string bounded by length only: for what the service writes (an error may name a field the
 * client misspelt, control characters and all) and for input the service does not read as text.
 */
export const lengthBoundedText = (minimum: number, maximum: number) =>
  z.string().check(...lengthChecks(minimum, maximum));

/** A string of `minimum` to `maximum` characters (code points), without control characters. */
export const boundedText = (minimum: number, maximum: number) =>
  z
    .string()
    .check(
      ...lengthChecks(minimum, maximum),
      z.regex(
        WITHOUT_CONTROL_CHARACTERS,
        'must not contain control characters (U+0000-U+001F, U+007F-U+009F)',
      ),
    );

/** As boundedText, for free text that may span lines: line feed and tab are allowed. */
export const freeText = (minimum: number, maximum: number) =>
  z
    .string()
    .check(
      ...lengthChecks(minimum, maximum),
      z.regex(
        FREE_TEXT_WITHOUT_CONTROL_CHARACTERS,
        'must not contain control characters other than line feed and tab (U+0000-U+001F, U+007F-U+009F)',
      ),
    );

/**
 * States in the document the length a pattern already bounds (a country code is 2 letters),
 * without a second check that would report the same mistake twice.
 */
export const patternLength = (maximum: number) => z.meta({ maxLength: maximum });

/** The schema with a description for the document; a copy, so a shared schema keeps its own. */
export const described = <T extends z.ZodMiniType>(schema: T, description: string): T =>
  schema.check(z.describe(description));

/** An optional field with a description for the document. */
export const optionalField = <T extends z.ZodMiniType>(schema: T, description: string) =>
  described(z.optional(schema), description);
