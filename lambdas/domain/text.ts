import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

// zod/mini loads no messages (classic zod loads English): the English ones are part of this
// API's answers ("Too big: expected string to have <=36 characters"). Every schema module
// imports this one, so the messages are set before anything is parsed.
z.config(en());

/**
 * "At most N characters" as the spec means it: Unicode code points, so 'é' and an emoji are
 * one character each, as JSON Schema's `maxLength` counts them. zod's `maxLength` counts code
 * points for strings (test/unit/domain/text.test.ts holds it to that).
 */
export const atMostCharacters = (maximum: number) => z.maxLength(maximum);

/** A string of `minimum` to `maximum` characters (code points). */
export const boundedText = (minimum: number, maximum: number) =>
  minimum > 0
    ? z.string().check(z.minLength(minimum), atMostCharacters(maximum))
    : z.string().check(atMostCharacters(maximum));

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
