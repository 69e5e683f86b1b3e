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

/**
 * Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) and the line and
 * paragraph separators (U+2028, U+2029): an override makes text show otherwise than it reads
 * ("Ali\u202Ecod.exe"), and the separators break lines where no line feed is allowed. Refused
 * in all text; the marks a script needs (U+200E, U+200F, zero-width joiners) stay allowed.
 */
export const WITHOUT_BIDI_OVERRIDES = /^[^\u2028\u2029\u202A-\u202E\u2066-\u2069]*$/;
const BIDI_REASON =
  'must not contain bidirectional overrides (U+202A-U+202E, U+2066-U+2069) or line and paragraph separators (U+2028, U+2029)';

/**
 * An identifier shows every character it holds: no format character (Unicode category Cf: zero-width
 * spaces and joiners, bidi marks, U+FEFF), no separator but the plain space (Z: U+00A0, U+2028,
 * U+3000, ...), no private-use, unassigned or surrogate code point, so no two ids that differ look
 * alike. (zod checks it with a Unicode-aware expression; the document states it in words.)
 */
const VISIBLE_IDENTIFIER = /^(?:[^\p{C}\p{Z}]| )*$/u;
const IDENTIFIER_REASON =
  'must not contain control, invisible or format characters (Unicode categories C and Z other than the space, e.g. U+0000, U+200B, U+202E, U+2028, U+00A0)';

/**
 * Scripts an identifier's letters are told apart by. Digits, punctuation and marks belong to
 * every script (Unicode's Common and Inherited); a letter of a script not listed counts as one
 * script, `Other`.
 */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Georgian',
  'Hangul',
  'Ethiopic',
  'Cherokee',
  'Khmer',
  'Mongolian',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
].map((name) => ({ name, pattern: new RegExp(`^\\p{Script=${name}}$`, 'u') }));
const EVERY_SCRIPT = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
/** The mixes Unicode's "highly restrictive" profile (UTS #39) allows: how Japanese, Chinese and Korean ids are written. */
const SCRIPT_MIXES: readonly ReadonlySet<string>[] = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

/** Whether the letters of `value` are of one script, or of one of the mixes CJK ids are written in. */
export const isSingleScript = (value: string): boolean => {
  if (/^[\x20-\x7E]*$/.test(value)) return true;
  const scripts = new Set<string>();
  for (const character of value) {
    if (EVERY_SCRIPT.test(character)) continue;
    scripts.add(SCRIPTS.find(({ pattern }) => pattern.test(character))?.name ?? 'Other');
  }
  return scripts.size <= 1 || SCRIPT_MIXES.some((mix) => [...scripts].every((script) => mix.has(script)));
};

/**
 * Whether `value` is its own compatibility normal form (NFKC): full-width digits, ligatures,
 * superscripts and an accent written as a separate mark all have a plainer form that looks alike.
 */
export const isNfkcStable = (value: string): boolean => value.normalize('NFKC') === value;

const NFKC_REASON =
  'must be written in its plain form (Unicode NFKC): no full-width or other compatibility characters (e.g. U+FF10-U+FF19 full-width digits, U+FB01 ligature), no accent written as a separate mark';
const SCRIPT_REASON =
  'must not mix letters of different scripts (e.g. a Cyrillic U+0410 among Latin letters): two ids that differ must look different';

const lengthChecks = (minimum: number, maximum: number) =>
  minimum > 0 ? [z.minLength(minimum), atMostCharacters(maximum)] : [atMostCharacters(maximum)];

/**
 * A string bounded by length only: for what the service writes (an error may name a field the
 * client misspelt, control characters and all) and for input the service does not read as text.
 */
export const lengthBoundedText = (minimum: number, maximum: number) =>
  z.string().check(...lengthChecks(minimum, maximum));

/** A string of `minimum` to `maximum` characters (code points), without control characters or bidi overrides. */
export const boundedText = (minimum: number, maximum: number) =>
  z.string().check(
    ...lengthChecks(minimum, maximum),
    z.regex(WITHOUT_CONTROL_CHARACTERS, 'must not contain control characters (U+0000-U+001F, U+007F-U+009F)'),
    z.refine((value) => WITHOUT_BIDI_OVERRIDES.test(value), BIDI_REASON),
  );

/** As boundedText, for what identifies something (an account, a payment, a servicer): only visible characters. */
export const identifierText = (minimum: number, maximum: number) =>
  z.string().check(
    ...lengthChecks(minimum, maximum),
    // Categories C and Z hold the control characters too: one reason per field, the first broken.
    z.refine((value) => VISIBLE_IDENTIFIER.test(value), { error: IDENTIFIER_REASON, abort: true }),
    z.refine(isNfkcStable, { error: NFKC_REASON, abort: true }),
    z.refine(isSingleScript, { error: SCRIPT_REASON, abort: true }),
    // The document keeps the control-character pattern, which every regex dialect reads alike.
    z.meta({ pattern: WITHOUT_CONTROL_CHARACTERS.source }),
  );

/**
 * An idempotency key: 1 to `maximum` visible ASCII characters (U+0021-U+007E). A header is
 * bytes, which Node and API Gateway read as Latin-1: anything beyond ASCII would be stored as
 * other characters than were sent, and counted in bytes.
 */
export const visibleAsciiKey = (maximum: number) =>
  z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(maximum),
      z.regex(/^[\x21-\x7E]*$/, 'must be visible ASCII characters only (U+0021-U+007E), no space'),
    );

/** As boundedText, for free text that may span lines: line feed and tab are allowed. */
export const freeText = (minimum: number, maximum: number) =>
  z.string().check(
    ...lengthChecks(minimum, maximum),
    z.regex(
      FREE_TEXT_WITHOUT_CONTROL_CHARACTERS,
      'must not contain control characters other than line feed and tab (U+0000-U+001F, U+007F-U+009F)',
    ),
    z.refine((value) => WITHOUT_BIDI_OVERRIDES.test(value), BIDI_REASON),
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
