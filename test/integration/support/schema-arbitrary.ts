import fc from 'fast-check';

/** The part of JSON Schema (as the served OpenAPI 3.1 document writes it) that generation reads. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
}

export type Components = Record<string, JsonSchema>;

/** Text beyond ASCII: accents, CJK, right-to-left, astral characters (two UTF-16 units) and lone surrogates. */
export const hostileCharacter = fc.oneof(
  fc.constantFrom('é', 'ß', '中', 'ע', '\u200b', '\u0000', '"', '\\', '😀', '𝔘', '\ud800', '\udfff'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

export const hostileText = (options: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: hostileCharacter, ...options });

/** Lengths at and either side of a bound: where off-by-one errors live. */
const boundaryLengths = (schema: JsonSchema): number[] => {
  const lengths = new Set<number>();
  for (const bound of [schema.minLength, schema.maxLength]) {
    if (bound === undefined) continue;
    for (const length of [bound - 1, bound, bound + 1]) if (length >= 0) lengths.add(length);
  }
  return [...lengths];
};

/** A string of exactly `length` UTF-16 units, in ASCII or in astral characters (two units each). */
const stringOfLength = (length: number) =>
  fc.oneof(
    fc.constant('a'.repeat(length)),
    fc.constant('😀'.repeat(Math.floor(length / 2)) + (length % 2 === 1 ? 'é' : '')),
  );

const validString = (schema: JsonSchema): fc.Arbitrary<string> => {
  if (schema.pattern !== undefined) {
    try {
      return fc
        .stringMatching(new RegExp(schema.pattern))
        .filter(
          (value) =>
            value.length >= (schema.minLength ?? 0) &&
            value.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY),
        );
    } catch {
      // A pattern fast-check cannot generate from: fall through to free text.
    }
  }
  if (schema.format === 'date') {
    return fc
      .date({ min: new Date('2020-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
      .map((date) => date.toISOString().slice(0, 10));
  }
  if (schema.format === 'date-time') {
    return fc
      .date({ min: new Date('2020-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
      .map((date) => date.toISOString());
  }
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
};

/** Numbers a parser may mishandle: beyond 2^53, beyond a double, negative zero, fractions. */
export const hugeNumber = fc.constantFrom(
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  -0,
  0.1 + 0.2,
  1.2345678901234568e29,
);

export const hugeNumberText = fc.constantFrom(
  '1e309',
  '-1e309',
  '99999999999999999999999999999999999999',
  '-0',
  '0x10',
  '1_000',
  'NaN',
  'Infinity',
  '１２３',
  '1e-400',
);

const stringArbitrary = (schema: JsonSchema): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: validString(schema) },
    { weight: 1, arbitrary: fc.constantFrom(...boundaryLengths(schema), 0).chain(stringOfLength) },
    {
      weight: 1,
      arbitrary: hostileText({ maxLength: Math.min((schema.maxLength ?? 40) + 2, 80) }),
    },
    // A valid value with one foreign character put in.
    {
      weight: 1,
      arbitrary: fc.tuple(validString(schema), hostileCharacter, fc.nat()).map(([value, character, at]) => {
        const position = value.length === 0 ? 0 : at % value.length;
        return value.slice(0, position) + character + value.slice(position);
      }),
    },
  );

const numberArbitrary = (schema: JsonSchema, integer: boolean): fc.Arbitrary<number> => {
  const low = schema.minimum ?? schema.exclusiveMinimum;
  const high = schema.maximum ?? schema.exclusiveMaximum;
  const edges = [low, high].flatMap((bound) => (bound === undefined ? [] : [bound - 1, bound, bound + 1]));
  return fc.oneof(
    integer
      ? fc.integer({ min: low ?? -1000, max: high ?? 1000 })
      : fc.double({ min: low ?? -1000, max: high ?? 1000, noNaN: true }),
    ...(edges.length > 0 ? [fc.constantFrom(...edges)] : []),
    hugeNumber,
  );
};

/** Any JSON value at all, for a field given something of the wrong type. */
const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  hugeNumber,
  hostileText({ maxLength: 10 }),
  fc.constant([]),
  fc.constant({}),
);

/**
 * Values for a schema: mostly close to valid (so requests reach the deep rules), with the
 * boundaries of every bound, foreign and astral text, lone surrogates, huge numbers, fields
 * left out, unknown fields and values of the wrong type mixed in.
 */
export const arbitraryFromSchema = (
  schema: JsonSchema,
  components: Components,
  depth = 0,
): fc.Arbitrary<unknown> => {
  if (schema.$ref !== undefined) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = components[name];
    if (target === undefined) throw new Error(`unknown schema ${schema.$ref}`);
    return arbitraryFromSchema(target, components, depth);
  }
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants)
    return fc.oneof(...variants.map((variant) => arbitraryFromSchema(variant, components, depth)));
  if (schema.allOf?.length === 1 && schema.allOf[0])
    return arbitraryFromSchema(schema.allOf[0], components, depth);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined) {
    return fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...schema.enum) },
      { weight: 1, arbitrary: hostileText({ maxLength: 12 }) },
    );
  }
  const type = Array.isArray(schema.type) ? schema.type.find((name) => name !== 'null') : schema.type;
  const typed = ((): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'string':
        return stringArbitrary(schema);
      case 'integer':
        return numberArbitrary(schema, true);
      case 'number':
        return numberArbitrary(schema, false);
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const items = schema.items ?? {};
        const max = Math.min(schema.maxItems ?? 3, depth > 2 ? 1 : 3);
        return fc.oneof(
          fc.array(arbitraryFromSchema(items, components, depth + 1), {
            minLength: schema.minItems ?? 0,
            maxLength: max,
          }),
          ...(schema.maxItems !== undefined && schema.maxItems <= 50
            ? [
                fc.array(arbitraryFromSchema(items, components, depth + 1), {
                  minLength: schema.maxItems + 1,
                  maxLength: schema.maxItems + 1,
                }),
              ]
            : []),
        );
      }
      case 'object': {
        const properties = schema.properties ?? {};
        const required = new Set(schema.required ?? []);
        // Deeper than this, optional objects are left out: bodies stay small enough to send fast.
        const names = Object.keys(properties).filter((name) => required.has(name) || depth < 3);
        const model = Object.fromEntries(
          names.map((name) => [name, arbitraryFromSchema(properties[name] ?? {}, components, depth + 1)]),
        );
        const record = fc.record(model, {
          requiredKeys: names.filter((name) => required.has(name)),
        }) as fc.Arbitrary<Record<string, unknown>>;
        return fc.oneof(
          { weight: 6, arbitrary: record },
          // A required field dropped, or an unknown one added.
          {
            weight: 1,
            arbitrary: fc
              .tuple(record, fc.constantFrom(...(names.length > 0 ? names : ['x'])))
              .map(([value, dropped]) =>
                Object.fromEntries(Object.entries(value).filter(([name]) => name !== dropped)),
              ),
          },
          {
            weight: 1,
            arbitrary: fc
              .tuple(record, hostileText({ minLength: 1, maxLength: 8 }), wrongType)
              .map(([value, name, extra]) => ({ ...value, [name]: extra })),
          },
        );
      }
      default:
        return wrongType;
    }
  })();
  return fc.oneof({ weight: 12, arbitrary: typed }, { weight: 1, arbitrary: wrongType });
};
