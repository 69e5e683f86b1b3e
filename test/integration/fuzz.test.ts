import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import {
  callApi,
  type JsonReply,
  type LocalService,
  removeDataDir,
  requestToken,
  startLocalService,
} from './support/local-service.ts';
import {
  arbitraryFromSchema,
  type Components,
  hostileText,
  hugeNumberText,
  type JsonSchema,
} from './support/schema-arbitrary.ts';

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

let service: LocalService;
let token: string;
let components: Components;
let paths: Record<string, Record<string, Operation>>;

beforeAll(async () => {
  // The lifecycle stays off: statuses hold still, so a refused cancellation can be seen to leave none.
  service = await startLocalService({ env: { LOCAL_LIFECYCLE: 'off' } });
  token = await requestToken(service.baseUrl);
  const document = (await callApi(service.baseUrl, '/openapi.json')).body;
  components = document.components.schemas;
  paths = document.paths;
});

afterAll(async () => {
  await service?.stop();
  if (service) await removeDataDir(service.dataDir);
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
  const reply = await callApi(service.baseUrl, `${TRANSFERS}?limit=1`, { token });
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
              token,
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
          const reply = await callApi(service.baseUrl, `${TRANSFERS}?${search}`, { token });
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
              token,
              body: minimalCreditTransfer(),
            });
            expect(created.status).toBe(202);
            const path = `${TRANSFERS}/${created.body.paymentId}/cancellation`;
            const key = randomUUID();
            const reply = await callApi(service.baseUrl, path, {
              token,
              rawBody: JSON.stringify(body),
              headers: { idempotencyId: key, ...(servicerId !== undefined && { servicerId }) },
            });
            expectWellFormedAnswer(reply, JSON.stringify(body));
            expect([202, 400, 413, 415]).toContain(reply.status);
            // Had the refused request been recorded, this other reason under its key would be a 422.
            const probe = await callApi(service.baseUrl, path, {
              token,
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
