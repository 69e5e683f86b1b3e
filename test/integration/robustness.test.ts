import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientLimits, createHttpServer } from '#local/api-gateway';
import { ROUTES } from '#routes';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi } from './support/local-service.ts';
import { type RawReply, rawRequest, requestText } from './support/raw-http.ts';
import { useLocalService } from './support/use-local-service.ts';

/** Whatever a client sends, the answer is never a 5xx: bad input is the client's error, said clearly. */

/** Short client time limits, so a slow client is cut off in seconds rather than the default 30. */
const CLIENT_TIMEOUT_MS = 3000;

const service = useLocalService({ env: { CLIENT_TIMEOUT_MS: String(CLIENT_TIMEOUT_MS) }, token: true });

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
          finalHeaders.Authorization = `Bearer ${service.token}`;
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
          Authorization: `Bearer ${service.token}`,
        });
        expect(reply.status, `${route.path}?${search}: ${reply.text}`).toBeLessThan(500);
      },
    ),
    { numRuns: 300 },
  );
});

const TRANSFERS = '/v1/payments/credit-transfers';

/** The tenant's number of transfers, as the list reports it. */
const storedCount = async (): Promise<number> => {
  const reply = await callApi(service.baseUrl, `${TRANSFERS}?limit=1`, { token: service.token });
  expect(reply.status).toBe(200);
  return Number(reply.headers.get('pagination-total'));
};

/** DESIGN.md's error body, with the status and code expected. */
const expectProblem = (reply: RawReply, status: number, error: string) => {
  expect(reply.status, reply.body).toBe(status);
  expect(reply.headers['content-type']?.[0]).toMatch(/^application\/problem\+json/);
  expect(reply.json).toMatchObject({
    type: expect.stringMatching(/^urn:problem-type:/),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    error,
    error_description: expect.any(String),
  });
};

const post = (headerLines: [string, string][], body: string, path = TRANSFERS) =>
  rawRequest(service.serviceUrl, [requestText(service.serviceUrl, 'POST', path, headerLines, body)]);

const authorized = (): [string, string] => ['Authorization', `Bearer ${service.token}`];
const json: [string, string] = ['Content-Type', 'application/json'];
const transferBody = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify(minimalCreditTransfer(overrides));

/** Runs the refusal and checks the tenant's list shows no new transfer afterwards. */
const refusedWithoutWrite = async (attempt: () => Promise<RawReply>, status: number, error: string) => {
  const before = await storedCount();
  const reply = await attempt();
  expectProblem(reply, status, error);
  expect(await storedCount()).toBe(before);
  return reply;
};

describe('text that cannot be stored exactly as sent', () => {
  it('refuses a JSON string holding a lone surrogate, naming the field, and stores nothing', async () => {
    const body = transferBody({ purpose: 'PLACEHOLDER' }).replace('PLACEHOLDER', 'rent \\ud800');
    const reply = await refusedWithoutWrite(() => post([authorized(), json], body), 400, 'invalid_request');
    expect(reply.json.invalidParams).toEqual([{ name: 'purpose', reason: expect.any(String) }]);
  });

  it('refuses a lone surrogate in an object key and in a nested value', async () => {
    const inKey = transferBody().replace('{', '{"\\udc00x":1,');
    const key = await refusedWithoutWrite(() => post([authorized(), json], inKey), 400, 'invalid_request');
    expect(key.json.invalidParams[0].name).toBe('\uFFFDx'.replace('\uFFFD', '\udc00'));
    const nested = transferBody({ creditor: { name: 'X' } }).replace('"X"', '"\\ud83d"');
    const value = await refusedWithoutWrite(() => post([authorized(), json], nested), 400, 'invalid_request');
    expect(value.json.invalidParams[0].name).toBe('creditor.name');
  });

  it('accepts an escaped surrogate pair: an astral character is text like any other', async () => {
    const body = transferBody({ purpose: 'PLACEHOLDER' }).replace('PLACEHOLDER', 'gift \\ud83d\\ude00');
    const reply = await post([authorized(), json], body);
    expect(reply.status, reply.body).toBe(202);
    expect(reply.json.purpose).toBe('gift 😀');
  });

  it('refuses query values and names that are not UTF-8 once decoded, naming the parameter', async () => {
    for (const query of ['debtorAccountId.eq=%FF', 'debtorAccountId.eq=%ED%A0%80', 'checkType.eq=a%C3']) {
      const reply = await rawRequest(service.serviceUrl, [
        requestText(service.serviceUrl, 'GET', `${TRANSFERS}?${query}`, [authorized()]),
      ]);
      expectProblem(reply, 400, 'invalid_request');
      expect(reply.json.invalidParams, query).toEqual([
        { name: query.slice(0, query.indexOf('=')), reason: expect.any(String) },
      ]);
    }
    const name = await rawRequest(service.serviceUrl, [
      requestText(service.serviceUrl, 'GET', `${TRANSFERS}?%FF=1`, [authorized()]),
    ]);
    expectProblem(name, 400, 'invalid_request');
  });

  it('refuses a path parameter that is not UTF-8 once decoded', async () => {
    for (const paymentId of ['%FF', '%ED%A0%80']) {
      const reply = await rawRequest(service.serviceUrl, [
        requestText(service.serviceUrl, 'GET', `${TRANSFERS}/${paymentId}/status`, [authorized()]),
      ]);
      expectProblem(reply, 400, 'invalid_request');
      expect(reply.json.invalidParams[0].name).toBe('paymentId');
    }
  });
});

describe('JSON nested without bound', () => {
  const arrays = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
  const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  /** Bodies within the 64 KiB limit, so the nesting is what is refused, not the size. */
  const deepBodies = [
    arrays(20_000),
    objects(10_000),
    `{"paymentMethod":"CreditTransfer","amount":"1","debtorAccountId":"d","identifiers":${arrays(20_000)}}`,
    `{"grant_type":"client_credentials","client_id":"x","client_secret":"y","scope":${objects(10_000)}}`,
  ];
  const STACK_TRACE = /Maximum call stack|RangeError|\n\s+at \S+ \(/;

  it('answers initiation with 400 and the error body, stores nothing, logs no stack trace', async () => {
    const logged = service.output().length;
    for (const body of deepBodies) {
      const reply = await refusedWithoutWrite(() => post([authorized(), json], body), 400, 'invalid_request');
      expect(reply.json.invalidParams).toEqual([
        { name: '(body)', reason: expect.stringMatching(/levels deep/) },
      ]);
    }
    // Past the size limit too: 413 with the error body, never 500.
    await refusedWithoutWrite(() => post([authorized(), json], objects(20_000)), 413, 'payload_too_large');
    expect(service.output().slice(logged)).not.toMatch(STACK_TRACE);
  });

  it('answers /oauth/token without authentication with 400 invalid_request, and logs no stack trace', async () => {
    const logged = service.output().length;
    for (const body of deepBodies) {
      const reply = await post([json], body, '/oauth/token');
      expect(reply.status, reply.body).toBe(400);
      expect(reply.headers['content-type']?.[0]).toMatch(/^application\/json/);
      expect(reply.json).toMatchObject({ error: 'invalid_request', error_description: expect.any(String) });
    }
    expect(service.output().slice(logged)).not.toMatch(STACK_TRACE);
  });

  it('answers a deep cancellation body with 400 too', async () => {
    const created = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer(),
    });
    expect(created.status).toBe(202);
    const reply = await post(
      [authorized(), json],
      `{"cancellationReason":${arrays(20_000)}}`,
      `${TRANSFERS}/${created.body.paymentId}/cancellation`,
    );
    expectProblem(reply, 400, 'invalid_request');
  });
});

describe('ambiguous requests', () => {
  it('refuses two Authorization headers, equal or not, in either order, before any payment', async () => {
    for (const second of [`Bearer ${service.token}`, 'Bearer not-a-token', 'Basic eDp5']) {
      for (const lines of [
        [authorized(), ['Authorization', second]],
        [['Authorization', second], authorized()],
      ] as [string, string][][]) {
        const reply = await refusedWithoutWrite(
          () => post([...lines, json], transferBody()),
          400,
          'invalid_request',
        );
        expect(reply.json.invalidParams[0].name).toBe('Authorization');
      }
    }
  });

  it('refuses a repeated Content-Type, Content-Length or servicer header even with equal values', async () => {
    const body = transferBody();
    const cases: [string, [string, string][]][] = [
      ['Content-Type', [json, ['content-type', 'application/json']]],
      ['servicerId', [json, ['servicerId', 'bank-1'], ['servicerId', 'bank-1']]],
      ['servicerBranchId', [json, ['servicerBranchId', 'b-1'], ['SERVICERBRANCHID', 'b-1']]],
      ['Idempotency-Key', [json, ['Idempotency-Key', 'k-twice'], ['Idempotency-Key', 'k-twice']]],
    ];
    for (const [name, lines] of cases) {
      const reply = await refusedWithoutWrite(
        () => post([authorized(), ...lines], body),
        400,
        'invalid_request',
      );
      expect(reply.json.invalidParams[0].name, name).toBe(name);
    }
    const length = String(Buffer.byteLength(body));
    await refusedWithoutWrite(
      () => post([authorized(), json, ['Content-Length', length], ['Content-Length', length]], body),
      400,
      'invalid_request',
    );
  });

  it('refuses a content-encoded body with 415 rather than reading it as JSON', async () => {
    const body = transferBody();
    await refusedWithoutWrite(
      () => post([authorized(), json, ['Content-Encoding', 'br']], body),
      415,
      'unsupported_media_type',
    );
    const gzipped = gzipSync(body);
    const head = requestText(service.serviceUrl, 'POST', TRANSFERS, [
      authorized(),
      json,
      ['Content-Encoding', 'gzip'],
      ['Content-Length', String(gzipped.length)],
    ]);
    await refusedWithoutWrite(
      () => rawRequest(service.serviceUrl, [head, gzipped]),
      415,
      'unsupported_media_type',
    );
    // identity is no encoding at all
    const identity = await post([authorized(), json, ['Content-Encoding', 'identity']], body);
    expect(identity.status, identity.body).toBe(202);
  });
});

describe('answers the HTTP layer gives by itself', () => {
  it('answers headers too large with 431 and the error body', async () => {
    const reply = await refusedWithoutWrite(
      () => post([authorized(), json, ['X-Padding', 'a'.repeat(20 * 1024)]], transferBody()),
      431,
      'request_header_fields_too_large',
    );
    expect(reply.json.title).toBe('Request Header Fields Too Large');
  });

  it("answers what Node's parser refuses with 400 and the error body", async () => {
    for (const malformed of [
      'NOT HTTP AT ALL\r\n\r\n',
      `POST ${TRANSFERS} HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n`,
      `POST ${TRANSFERS} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `POST ${TRANSFERS} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    ]) {
      expectProblem(await rawRequest(service.serviceUrl, [malformed]), 400, 'invalid_request');
    }
    // With a token: the body is read only once the request is authorized.
    const longChunkExtension = `POST ${TRANSFERS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${service.token}\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(20 * 1024)}\r\n`;
    expectProblem(await rawRequest(service.serviceUrl, [longChunkExtension]), 413, 'payload_too_large');
  });

  it('cuts off a client that trickles its headers, with 408 and the error body', async () => {
    const text = requestText(service.serviceUrl, 'GET', `${TRANSFERS}?limit=1`, [authorized()]);
    const pieces = [...text];
    const reply = await rawRequest(service.serviceUrl, pieces, { gapMs: 1000 });
    expectProblem(reply, 408, 'request_timeout');
    // Cut off well before the whole request could arrive at this pace.
    expect(reply.elapsedMs).toBeLessThan(pieces.length * 1000);
  });

  it('cuts off a client that trickles its body, with 408 and the error body, and stores nothing', async () => {
    const body = transferBody();
    const head = requestText(service.serviceUrl, 'POST', TRANSFERS, [
      authorized(),
      json,
      ['Content-Length', String(Buffer.byteLength(body))],
    ]);
    const reply = await refusedWithoutWrite(
      () => rawRequest(service.serviceUrl, [head, ...body], { gapMs: 1000 }),
      408,
      'request_timeout',
    );
    expect(reply.elapsedMs).toBeLessThan(body.length * 1000);
  });

  it('gives a slow client at most 30 seconds by default, headers and body together', () => {
    const server = createHttpServer(() => undefined, clientLimits({}));
    try {
      // Node looks for expired requests every connectionsCheckingInterval: each limit is late by that at most.
      // Public on the server, though @types/node does not declare it.
      const lateBy = (server as typeof server & { connectionsCheckingInterval: number })
        .connectionsCheckingInterval;
      for (const limit of [server.headersTimeout, server.requestTimeout, clientLimits({}).bodyTimeoutMs]) {
        expect(limit).toBeGreaterThan(0);
        expect(limit + lateBy).toBeLessThanOrEqual(30_000);
      }
      expect(server.listenerCount('clientError')).toBe(1);
    } finally {
      server.close();
    }
  });
});

describe('bodies refused before they are read', () => {
  const TEN_MB = 10 * 1024 * 1024;
  const firstBytes = 'x'.repeat(1024);

  it('answers 401 to a large upload without a token before its body has been sent', async () => {
    const head = requestText(service.serviceUrl, 'POST', TRANSFERS, [
      json,
      ['Content-Length', String(TEN_MB)],
    ]);
    // Only the first kilobyte is ever sent: the answer cannot wait for the rest.
    expectProblem(await rawRequest(service.serviceUrl, [head, firstBytes]), 401, 'unauthorized');
  });

  it('answers 413 to a declared length over the limit before its body has been sent, in the route’s own form', async () => {
    const head = requestText(service.serviceUrl, 'POST', '/oauth/token', [
      json,
      ['Content-Length', String(TEN_MB)],
    ]);
    const reply = await rawRequest(service.serviceUrl, [head, firstBytes]);
    expect(reply.status).toBe(413);
    expect(reply.json.error).toBe('payload_too_large');
    expect(reply.headers['content-type']).toEqual(['application/json']);

    const initiation = requestText(service.serviceUrl, 'POST', TRANSFERS, [
      authorized(),
      json,
      ['Content-Length', String(TEN_MB)],
    ]);
    expectProblem(await rawRequest(service.serviceUrl, [initiation, firstBytes]), 413, 'payload_too_large');
  });

  it('answers 413 to a chunked body once it grows past the limit, before it ends', async () => {
    const head = requestText(service.serviceUrl, 'POST', TRANSFERS, [
      authorized(),
      json,
      ['Transfer-Encoding', 'chunked'],
    ]);
    const chunk = `${(16 * 1024).toString(16)}\r\n${'x'.repeat(16 * 1024)}\r\n`;
    // 80 KiB sent of a body that never ends: past the 64 KiB limit, the answer comes.
    const reply = await rawRequest(service.serviceUrl, [head, ...Array.from({ length: 5 }, () => chunk)], {
      gapMs: 20,
    });
    expectProblem(reply, 413, 'payload_too_large');
  });

  it('answers a client waiting for 100 Continue without asking for its body when the request is refused', async () => {
    const head = requestText(service.serviceUrl, 'POST', TRANSFERS, [
      json,
      ['Content-Length', String(TEN_MB)],
      ['Expect', '100-continue'],
    ]);
    const reply = await rawRequest(service.serviceUrl, [head]);
    expectProblem(reply, 401, 'unauthorized');
  });
});
