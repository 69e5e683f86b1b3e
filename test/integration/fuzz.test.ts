import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, type JsonReply } from './support/local-service.ts';
import {
  arbitraryFromSchema,
  type Components,
  hostileText,
  hugeNumberText,
  type JsonSchema,
} from './support/schema-arbitrary.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * Requests generated from the schemas the service itself serves at /openapi.json, sent over
 * HTTP: whatever they hold, the answer is never a 5xx, every error carries the error body, and
 * a refused request stores nothing. The seed is fixed so a run is repeatable; FUZZ_SEED picks
 * another, FUZZ_RUNS scales the number of runs (1 by default).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1);
/** Each property sends hundreds of requests: far more time than one request needs, on a busy machine too. */
const PROPERTY_TIMEOUT_MS = 300_000;
const runs = (count: number) => ({ seed: SEED, numRuns: Math.max(1, Math.round(count * RUNS)) });

const TRANSFERS = '/v1/payments/credit-transfers';

interface Operation {
  parameters?: { name: string; in: string; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}

// The lifecycle stays off: statuses hold still, so a refused cancellation can be seen to leave none.
const service = useLocalService({ env: { LOCAL_LIFECYCLE: 'off' }, token: true });
let components: Components;
let paths: Record<string, Record<string, Operation>>;

beforeAll(async () => {
  const document = (await callApi(service.baseUrl, '/openapi.json')).body;
  components = document.components.schemas;
  paths = document.paths;
});

const operation = (path: string, method: string): Operation => {
  const found = paths[path]?.[method];
  if (!found) throw new Error(`the served document has no ${method} ${path}`);
  return found;
};

const bodySchema = (path: string, method: string): JsonSchema => {
  const schema = operation(path, method).requestBody?.content['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} has no JSON body in the served document`);
  return schema;
};

const resolved = (schema: JsonSchema): JsonSchema =>
  schema.$ref === undefined
    ? schema
    : resolved(components[schema.$ref.replace('#/components/schemas/', '')] ?? {});

const expectWellFormedAnswer = (reply: JsonReply, what: string) => {
  expect(reply.status, `${what} -> ${JSON.stringify(reply.body)}`).toBeLessThan(500);
  if (reply.status >= 400) {
    expect(reply.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
    expect(reply.body, what).toMatchObject({
      type: expect.any(String),
      title: expect.any(String),
      status: reply.status,
      detail: expect.any(String),
      error: expect.any(String),
      error_description: expect.any(String),
    });
  }
};

const storedCount = async (): Promise<number> => {
  const reply = await callApi(service.baseUrl, `${TRANSFERS}?limit=1`, { token: service.token });
  expect(reply.status).toBe(200);
  return Number(reply.headers.get('pagination-total'));
};

/** Servicer headers as generated: absent, valid-looking, at their bounds, or hostile ASCII. */
const servicerHeaderValue = fc.option(
  fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9-]{1,40}$/),
    fc.string({ unit: 'binary-ascii', maxLength: 40 }).filter((value) => /^[\x21-\x7e]*$/.test(value)),
  ),
  { nil: undefined },
);

describe('requests generated from the served OpenAPI schemas', () => {
  it(
    'initiation: no 5xx, every error has the error body, a refusal stores nothing',
    async () => {
      const schema = bodySchema(TRANSFERS, 'post');
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            { weight: 3, arbitrary: arbitraryFromSchema(schema, components) },
            // A valid minimal body with one generated field added: most reach the rules beyond the shape.
            {
              weight: 2,
              arbitrary: fc
                .constantFrom(...Object.keys(resolved(schema).properties ?? {}))
                .chain((field) =>
                  arbitraryFromSchema(resolved(schema).properties?.[field] ?? {}, components).map((value) =>
                    minimalCreditTransfer({ [field]: value }),
                  ),
                ),
            },
            // Known-good bodies with one field replaced: the deep rules see hostile values too.
            {
              weight: 1,
              arbitrary: fc
                .tuple(
                  fc.constantFrom('amount', 'currency', 'purpose', 'debtorAccountId', 'valueDate'),
                  fc.oneof(hostileText({ maxLength: 40 }), hugeNumberText),
                )
                .map(([field, value]) => minimalCreditTransfer({ [field]: value })),
            },
          ),
          servicerHeaderValue,
          async (body, servicerId) => {
            const before = await storedCount();
            const reply = await callApi(service.baseUrl, TRANSFERS, {
              token: service.token,
              rawBody: JSON.stringify(body),
              headers: { idempotencyId: randomUUID(), ...(servicerId !== undefined && { servicerId }) },
            });
            expectWellFormedAnswer(reply, JSON.stringify(body));
            expect(reply.status === 202 || (reply.status >= 400 && reply.status < 500)).toBe(true);
            expect(await storedCount()).toBe(reply.status === 202 ? before + 1 : before);
          },
        ),
        runs(240),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'list: known parameters with generated and bad values answer 200 or a 400 with the error body',
    async () => {
      const parameters = (operation(TRANSFERS, 'get').parameters ?? []).filter(
        (parameter) => parameter.in === 'query',
      );
      expect(parameters.length).toBeGreaterThan(5);
      const value = (schema: JsonSchema) =>
        fc.oneof(
          arbitraryFromSchema(schema, components).map((generated) =>
            typeof generated === 'string' ? generated : JSON.stringify(generated),
          ),
          hostileText({ maxLength: 40 }),
          hugeNumberText,
        );
      const query = fc
        .uniqueArray(fc.constantFrom(...parameters), { minLength: 1, maxLength: 4, selector: (p) => p.name })
        .chain((chosen) =>
          fc.tuple(
            ...chosen.map((parameter) =>
              value(parameter.schema).map((text) => [parameter.name, text] as const),
            ),
          ),
        );
      await fc.assert(
        fc.asyncProperty(query, async (pairs) => {
          // encodeURIComponent refuses lone surrogates; they go as the bytes a client would send.
          const search = pairs
            .map(([name, text]) => `${name}=${Buffer.from(text).toString('hex').replace(/../g, '%$&')}`)
            .join('&');
          const reply = await callApi(service.baseUrl, `${TRANSFERS}?${search}`, { token: service.token });
          expectWellFormedAnswer(reply, search);
          expect([200, 400], search).toContain(reply.status);
          if (reply.status === 200) expect(Array.isArray(reply.body)).toBe(true);
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'cancellation: no 5xx, every error has the error body, a refusal records no cancellation',
    async () => {
      const schema = bodySchema(`${TRANSFERS}/{paymentId}/cancellation`, 'post');
      await fc.assert(
        fc.asyncProperty(
          arbitraryFromSchema(schema, components),
          servicerHeaderValue,
          async (body, servicerId) => {
            const created = await callApi(service.baseUrl, TRANSFERS, {
              token: service.token,
              body: minimalCreditTransfer(),
            });
            expect(created.status).toBe(202);
            const path = `${TRANSFERS}/${created.body.paymentId}/cancellation`;
            const key = randomUUID();
            const reply = await callApi(service.baseUrl, path, {
              token: service.token,
              rawBody: JSON.stringify(body),
              headers: { idempotencyId: key, ...(servicerId !== undefined && { servicerId }) },
            });
            expectWellFormedAnswer(reply, JSON.stringify(body));
            expect([202, 400, 413, 415]).toContain(reply.status);
            // Had the refused request been recorded, this other reason under its key would be a 422.
            const probe = await callApi(service.baseUrl, path, {
              token: service.token,
              body: { cancellationReason: `probe ${key}` },
              headers: { idempotencyId: key },
            });
            if (reply.status === 202) {
              expect(probe.status).not.toBe(202);
            } else {
              expect(probe.status, JSON.stringify(probe.body)).toBe(202);
              expect(probe.headers.get('idempotent-replayed')).not.toBe('true');
            }
          },
        ),
        runs(120),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

/** C0 (U+0000-U+001F), DEL and C1 (U+0080-U+009F). */
const CONTROL_CHARACTERS = [
  ...Array.from({ length: 0x20 }, (_, code) => code),
  ...Array.from({ length: 0x21 }, (_, offset) => 0x7f + offset),
].map((code) => String.fromCodePoint(code));
/** The free text where a person may break lines: line feed and tab are allowed there, nowhere else. */
const FREE_TEXT_FIELDS = new Set(['purpose', 'cancellationReason']);

interface TextField {
  /** The name `invalidParams` gives it: `creditor.postalAddress.addressLine[0]`. */
  name: string;
  /** The path into a body, array items at index 0. */
  path: (string | number)[];
  maxLength: number;
}

/**
 * Every text field of a served request body schema: strings without a format or a pattern of
 * their own (amounts, codes and dates have one), found by walking the schema and its $refs.
 */
const textFieldsOf = (schema: JsonSchema): TextField[] => {
  const found: TextField[] = [];
  const pending: { schema: JsonSchema; path: (string | number)[]; seen: Set<string> }[] = [
    { schema, path: [], seen: new Set() },
  ];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { path, seen } = next;
    if (next.schema.$ref !== undefined && seen.has(next.schema.$ref)) continue;
    const current = resolved(next.schema);
    const within = next.schema.$ref === undefined ? seen : new Set([...seen, next.schema.$ref]);
    const variant = (current.anyOf ?? current.oneOf ?? current.allOf)?.[0];
    if (variant !== undefined) {
      pending.push({ schema: variant, path, seen: within });
      continue;
    }
    const type = Array.isArray(current.type) ? current.type.find((name) => name !== 'null') : current.type;
    if (type === 'object') {
      for (const [key, property] of Object.entries(current.properties ?? {}))
        pending.push({ schema: property, path: [...path, key], seen: within });
    } else if (type === 'array' && current.items !== undefined) {
      pending.push({ schema: current.items, path: [...path, 0], seen: within });
    } else if (
      type === 'string' &&
      current.format === undefined &&
      current.enum === undefined &&
      (current.pattern === undefined || current.pattern.startsWith('^[^\\u0000'))
    ) {
      const name = path.reduce<string>(
        (text, key) => (typeof key === 'number' ? `${text}[${key}]` : text === '' ? key : `${text}.${key}`),
        '',
      );
      found.push({ name, path, maxLength: current.maxLength ?? 40 });
    }
  }
  return found;
};

/** `base` with `value` put at `path`, the objects and arrays on the way made as needed. */
const withValueAt = (base: Record<string, unknown>, path: (string | number)[], value: unknown) => {
  const body = structuredClone(base);
  let container: Record<string | number, unknown> = body;
  for (const [index, key] of path.entries()) {
    if (index === path.length - 1) {
      container[key] = value;
    } else {
      container[key] ??= typeof path[index + 1] === 'number' ? [] : {};
      container = container[key] as Record<string | number, unknown>;
    }
  }
  return body;
};

/** Text around one control character, short enough for the field, with nothing else to refuse. */
const textWithControl = (maxLength: number) =>
  fc
    .tuple(
      fc.stringMatching(/^[A-Za-z0-9 .,-]{1,6}$/),
      fc.constantFrom(...CONTROL_CHARACTERS),
      fc.stringMatching(/^[A-Za-z0-9 .,-]{0,6}$/),
    )
    .map(([before, control, after]) => ({
      control,
      text: `${before.trim() || 'a'}${control}${after}`.slice(0, Math.max(2, maxLength)),
    }));

describe('control characters in every text field of the served schemas', () => {
  it(
    'initiation: each is a 400 naming the field, except line feed and tab in purpose; nothing is stored',
    async () => {
      const fields = textFieldsOf(bodySchema(TRANSFERS, 'post'));
      // Every free-text field the spec defines, down to addresses and agent identifiers.
      expect(fields.length).toBeGreaterThan(80);
      expect(fields.map(({ name }) => name)).toEqual(
        expect.arrayContaining(['purpose', 'paymentMethod', 'creditor.postalAddress.addressLine[0]']),
      );
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...fields)
            .chain((field) => fc.tuple(fc.constant(field), textWithControl(field.maxLength))),
          async ([field, { control, text }]) => {
            const allowed = FREE_TEXT_FIELDS.has(field.name) && (control === '\n' || control === '\t');
            const body = withValueAt(minimalCreditTransfer(), field.path, text);
            const before = await storedCount();
            const reply = await callApi(service.baseUrl, TRANSFERS, { token: service.token, body });
            const what = `${field.name} = ${JSON.stringify(text)}`;
            expectWellFormedAnswer(reply, what);
            if (allowed) {
              expect(reply.status, what).toBe(202);
            } else {
              expect(reply.status, what).toBe(400);
              expect(reply.body.invalidParams, what).toEqual([
                { name: field.name, reason: expect.any(String) },
              ]);
              expect(await storedCount(), what).toBe(before);
            }
          },
        ),
        runs(200),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'cancellation reason and the servicer headers: a 400 naming the field, line feed and tab only in the reason',
    async () => {
      const [reasonField] = textFieldsOf(bodySchema(`${TRANSFERS}/{paymentId}/cancellation`, 'post'));
      expect(reasonField?.name).toBe('cancellationReason');
      await fc.assert(
        fc.asyncProperty(textWithControl(1025), async ({ control, text }) => {
          const created = await callApi(service.baseUrl, TRANSFERS, {
            token: service.token,
            body: minimalCreditTransfer(),
          });
          expect(created.status).toBe(202);
          const path = `${TRANSFERS}/${created.body.paymentId}/cancellation`;
          const reply = await callApi(service.baseUrl, path, {
            token: service.token,
            body: { cancellationReason: text },
            headers: { idempotencyId: randomUUID() },
          });
          expectWellFormedAnswer(reply, JSON.stringify(text));
          if (control === '\n' || control === '\t') {
            expect(reply.status).toBe(202);
          } else {
            expect(reply.status).toBe(400);
            expect(reply.body.invalidParams).toEqual([
              { name: 'cancellationReason', reason: expect.any(String) },
            ]);
          }
        }),
        runs(60),
      );
      // A header value can carry a tab (HTTP lets it through); as text it is refused all the same.
      for (const header of ['servicerId', 'servicerBranchId', 'idempotencyId']) {
        const reply = await callApi(service.baseUrl, TRANSFERS, {
          token: service.token,
          body: minimalCreditTransfer(),
          headers: { [header]: 'BANK\t001' },
        });
        expectWellFormedAnswer(reply, header);
        expect(reply.status, header).toBe(400);
        expect(reply.body.invalidParams?.[0]?.name, header).toBe(header);
      }
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('JSON nested past any bound', () => {
  /** Nesting of a random mix of arrays and objects, `depth` levels deep. */
  const deepValue = fc
    .tuple(fc.integer({ min: 33, max: 30_000 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }))
    .map(([depth, kinds]) => {
      const open: string[] = [];
      const close: string[] = [];
      for (let level = 0; level < depth; level++) {
        const array = kinds[level % kinds.length];
        open.push(array ? '[' : '{"k":');
        close.push(array ? ']' : '}');
      }
      return `${open.join('')}0${close.reverse().join('')}`;
    });

  /** At the root, or as the value of one field of an otherwise valid body. */
  const deepBody = (valid: Record<string, unknown>) =>
    fc
      .tuple(
        deepValue,
        fc.option(fc.constantFrom(...Object.keys(valid), 'identifiers', 'x'), { nil: undefined }),
      )
      .map(([value, field]) =>
        field === undefined
          ? value
          : JSON.stringify({ ...valid, [field]: 'PLACEHOLDER' }).replace('"PLACEHOLDER"', value),
      );

  it(
    'initiation, cancellation and /oauth/token answer 400 or 413 with the error body, never a 5xx',
    async () => {
      const created = await callApi(service.baseUrl, TRANSFERS, {
        token: service.token,
        body: minimalCreditTransfer(),
      });
      expect(created.status).toBe(202);
      const token400 = { grant_type: 'client_credentials', client_id: 'x', client_secret: 'y' };
      const targets = [
        { path: TRANSFERS, valid: minimalCreditTransfer(), authorized: true },
        {
          path: `${TRANSFERS}/${created.body.paymentId}/cancellation`,
          valid: { cancellationReason: 'r' },
          authorized: true,
        },
        { path: '/oauth/token', valid: token400, authorized: false },
      ];
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...targets)
            .chain((target) => fc.tuple(fc.constant(target), deepBody(target.valid))),
          async ([target, rawBody]) => {
            const before = await storedCount();
            const reply = await callApi(service.baseUrl, target.path, {
              ...(target.authorized && { token: service.token }),
              rawBody,
              headers: { idempotencyId: randomUUID() },
            });
            const what = `${target.path}: ${rawBody.length} bytes`;
            expect([400, 413], what).toContain(reply.status);
            expect(reply.body, what).toMatchObject({
              error: expect.any(String),
              error_description: expect.any(String),
            });
            if (target.path !== '/oauth/token') expectWellFormedAnswer(reply, what);
            expect(await storedCount(), what).toBe(before);
          },
        ),
        runs(45),
      );
      expect(service.output()).not.toMatch(/Maximum call stack|RangeError/);
    },
    PROPERTY_TIMEOUT_MS,
  );
});
