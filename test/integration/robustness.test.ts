import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROUTES } from '#routes';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import {
  type LocalService,
  removeDataDir,
  requestToken,
  startLocalService,
} from './support/local-service.ts';

/** Whatever a client sends, the answer is never a 5xx: bad input is the client's error, said clearly. */
let service: LocalService;
let token: string;

beforeAll(async () => {
  service = await startLocalService();
  token = await requestToken(service.baseUrl);
});

afterAll(async () => {
  await service?.stop();
  if (service) await removeDataDir(service.dataDir);
});

const concretePath = (path: string, parameter: string) =>
  path.replace(/\{[^}]+\}/g, encodeURIComponent(parameter));

const send = async (
  method: string,
  path: string,
  body: string | undefined,
  headers: Record<string, string>,
) => {
  const response = await fetch(`${service.baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, text, contentType: response.headers.get('content-type') ?? '' };
};

const arbitraryBody = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string(),
  fc
    .record({ amount: fc.string(), paymentMethod: fc.string(), debtorAccountId: fc.string() })
    .map((value) => JSON.stringify(value)),
  fc
    .dictionary(fc.string(), fc.jsonValue(), { maxKeys: 5 })
    .map((extra) => JSON.stringify(minimalCreditTransfer(extra))),
  fc.constantFrom(
    '',
    '{',
    'null',
    '[]',
    '"x"',
    '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{}}}',
  ),
);

const arbitraryHeaders = fc.record(
  {
    'Content-Type': fc.constantFrom(
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=utf-8',
      'x',
    ),
    idempotencyId: fc.string({ maxLength: 40 }).filter((value) => /^[\x21-\x7e]*$/.test(value)),
    servicerId: fc.string({ maxLength: 40 }).filter((value) => /^[\x21-\x7e]*$/.test(value)),
    Authorization: fc.oneof(
      fc.constant(`Bearer ${'placeholder'}`),
      fc.string({ maxLength: 60 }).filter((value) => /^[\x21-\x7e ]*$/.test(value)),
    ),
  },
  { requiredKeys: ['Content-Type'] },
);

it('answers arbitrary bodies, headers and path parameters on every route without a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...ROUTES),
      arbitraryBody,
      arbitraryHeaders,
      fc.string({ maxLength: 50 }),
      fc.boolean(),
      async (route, body, headers, parameter, useRealToken) => {
        const finalHeaders = { ...headers };
        if (headers.Authorization === 'Bearer placeholder' || useRealToken)
          finalHeaders.Authorization = `Bearer ${token}`;
        const reply = await send(
          route.method,
          concretePath(route.path, parameter),
          route.method === 'GET' ? undefined : body,
          finalHeaders,
        );
        expect(reply.status, `${route.method} ${route.path}: ${reply.text}`).toBeLessThan(500);
        if (reply.status >= 400) {
          const problem = JSON.parse(reply.text);
          expect(problem.error).toEqual(expect.any(String));
          expect(problem.error_description).toEqual(expect.any(String));
        }
      },
    ),
    { numRuns: 500 },
  );
});

it('answers arbitrary query strings on every GET route without a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...ROUTES.filter((route) => route.method === 'GET')),
      fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ maxLength: 40 }), { maxKeys: 4 }),
      async (route, query) => {
        const search = new URLSearchParams(query).toString();
        const reply = await send('GET', `${concretePath(route.path, 'x')}?${search}`, undefined, {
          Authorization: `Bearer ${token}`,
        });
        expect(reply.status, `${route.path}?${search}: ${reply.text}`).toBeLessThan(500);
      },
    ),
    { numRuns: 300 },
  );
});
