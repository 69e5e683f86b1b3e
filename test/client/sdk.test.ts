import { describe, expect, it } from 'vitest';
import { ApiError, CreditTransfersClient, NetworkError, TokenManager } from '../../client/src/index.ts';
import { backoffDelay, DEFAULT_RETRY, retryAfterMs } from '../../client/src/retry.ts';
import { fakeFetch, json, queued, tokenAnswer } from './fake-fetch.ts';

const BASE = 'https://api.example.test';
const SECRET = 'very-secret-client-secret-value';
const FAST = { baseDelayMs: 1, maxDelayMs: 2, attempts: 4 };
const transfer = { paymentMethod: 'CreditTransfer', amount: '10.00', debtorAccountId: 'acc-1' };
const accepted = { ...transfer, paymentId: 'p-1', status: 'Received', date: '2026-01-01T00:00:00.000Z' };

const clientWith = (fetch: typeof globalThis.fetch) =>
  new CreditTransfersClient({ baseUrl: BASE, clientId: 'c-1', clientSecret: SECRET, fetch, retry: FAST });

describe('token manager', () => {
  it('caches the token until shortly before it expires, then obtains a new one', async () => {
    let now = 0;
    const { fetch, requests } = fakeFetch(
      queued({ '/oauth/token': [tokenAnswer('t1', 100), tokenAnswer('t2', 100)] }),
    );
    const tokens = new TokenManager({
      tokenUrl: `${BASE}/oauth/token`,
      clientId: 'c',
      clientSecret: SECRET,
      fetch,
      now: () => now,
    });
    expect(await tokens.accessToken()).toBe('t1');
    now = 89_000; // before the renewal margin (a tenth of 100 s)
    expect(await tokens.accessToken()).toBe('t1');
    now = 91_000; // inside it, still before expiry
    expect(await tokens.accessToken()).toBe('t2');
    expect(requests).toHaveLength(2);
  });

  it('shares one token request between concurrent callers', async () => {
    const { fetch, requests } = fakeFetch(queued({ '/oauth/token': [tokenAnswer('t1')] }));
    const tokens = new TokenManager({
      tokenUrl: `${BASE}/oauth/token`,
      clientId: 'c',
      clientSecret: SECRET,
      fetch,
    });
    expect(await Promise.all([tokens.accessToken(), tokens.accessToken(), tokens.accessToken()])).toEqual([
      't1',
      't1',
      't1',
    ]);
    expect(requests).toHaveLength(1);
  });

  it('one caller giving up does not end the token request the others share', async () => {
    let answer: (response: Response) => void = () => undefined;
    const fetch = (() =>
      new Promise<Response>((resolve) => {
        answer = resolve;
      })) as typeof globalThis.fetch;
    const tokens = new TokenManager({
      tokenUrl: `${BASE}/oauth/token`,
      clientId: 'c',
      clientSecret: SECRET,
      fetch,
    });
    const controller = new AbortController();
    const impatient = tokens.accessToken(controller.signal);
    const patient = tokens.accessToken();
    controller.abort(new Error('gave up'));
    await expect(impatient).rejects.toThrow('gave up');
    answer(tokenAnswer('t1'));
    expect(await patient).toBe('t1');
  });

  it('never shows the client secret: not in its error, the error object, or the manager itself', async () => {
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [
          json(401, { error: 'invalid_client', error_description: 'Client authentication failed' }),
        ],
      }),
    );
    const tokens = new TokenManager({
      tokenUrl: `${BASE}/oauth/token`,
      clientId: 'c',
      clientSecret: SECRET,
      fetch,
    });
    const error = await tokens.accessToken().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(401);
    expect((error as ApiError).error).toBe('invalid_client');
    const { inspect } = await import('node:util');
    for (const shown of [
      inspect(error, { depth: 10 }),
      JSON.stringify(error),
      inspect(tokens, { depth: 10, showHidden: true }),
      JSON.stringify(tokens),
    ])
      expect(shown).not.toContain(SECRET);
  });
});

describe('client calls', () => {
  it('renews the token once after a 401 and retries the call', async () => {
    const { fetch, requests } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('old'), tokenAnswer('new')],
        '/v1/payments/credit-transfers/p-1/status': [
          (request) =>
            request.headers.get('Authorization') === 'Bearer new'
              ? json(200, accepted)
              : json(401, { error: 'invalid_token', error_description: 'expired' }),
        ],
      }),
    );
    const { report } = await clientWith(fetch).status('p-1');
    expect(report?.paymentId).toBe('p-1');
    expect(requests.map((request) => new URL(request.url).pathname)).toEqual([
      '/oauth/token',
      '/v1/payments/credit-transfers/p-1/status',
      '/oauth/token',
      '/v1/payments/credit-transfers/p-1/status',
    ]);
  });

  it('gives up after a second 401 with the service error', async () => {
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers/p-1/status': [
          json(401, { error: 'invalid_token', error_description: 'no' }),
        ],
      }),
    );
    await expect(clientWith(fetch).status('p-1')).rejects.toMatchObject({
      status: 401,
      error: 'invalid_token',
    });
  });

  it('adds an idempotencyId to an initiation and sends the same one on every retry', async () => {
    const { fetch, requests } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers': [
          new TypeError('fetch failed'),
          json(503, { error: 'internal_error', error_description: 'busy' }),
          json(202, accepted),
        ],
      }),
    );
    const answer = await clientWith(fetch).initiate(transfer);
    expect(answer.paymentId).toBe('p-1');
    const posts = requests.filter(
      (request) => request.method === 'POST' && request.url.endsWith('/credit-transfers'),
    );
    expect(posts).toHaveLength(3);
    const keys = new Set(posts.map((request) => request.headers.get('idempotencyId')));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(posts.map((request) => request.body))).toEqual(new Set([JSON.stringify(transfer)]));
  });

  it("keeps the caller's idempotencyId for a cancellation", async () => {
    const { fetch, requests } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers/p-1/cancellation': [
          json(500, { error: 'internal_error', error_description: 'x' }),
          json(202, accepted),
        ],
      }),
    );
    await clientWith(fetch).cancel('p-1', { cancellationReason: 'twice' }, { idempotencyId: 'cancel-key-1' });
    const posts = requests.filter((request) => request.url.endsWith('/cancellation'));
    expect(posts.map((request) => request.headers.get('idempotencyId'))).toEqual([
      'cancel-key-1',
      'cancel-key-1',
    ]);
  });

  it('waits as long as Retry-After says after a 429', async () => {
    const times: number[] = [];
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers/p-1/status': [
          () => {
            times.push(Date.now());
            return json(
              429,
              { error: 'rate_limited', error_description: 'slow down' },
              { 'Retry-After': '1' },
            );
          },
          () => {
            times.push(Date.now());
            return json(200, accepted);
          },
        ],
      }),
    );
    await clientWith(fetch).status('p-1');
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it('stops after the bounded number of attempts with a NetworkError', async () => {
    const { fetch, requests } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers/p-1/status': [new TypeError('fetch failed')],
      }),
    );
    await expect(clientWith(fetch).status('p-1')).rejects.toBeInstanceOf(NetworkError);
    expect(requests.filter((request) => request.url.endsWith('/status'))).toHaveLength(FAST.attempts);
  });

  it('does not retry a 4xx refusal and carries invalidParams', async () => {
    const refusal = {
      error: 'invalid_request',
      error_description: 'The body is invalid',
      invalidParams: [{ name: 'amount', reason: 'does not match the amount pattern' }],
    };
    const { fetch, requests } = fakeFetch(
      queued({ '/oauth/token': [tokenAnswer('t')], '/v1/payments/credit-transfers': [json(400, refusal)] }),
    );
    const error = (await clientWith(fetch)
      .initiate(transfer)
      .catch((caught: unknown) => caught)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      error: 'invalid_request',
      error_description: 'The body is invalid',
    });
    expect(error.invalidParams).toEqual(refusal.invalidParams);
    expect(
      requests.filter((request) => request.method === 'POST' && request.url.endsWith('credit-transfers')),
    ).toHaveLength(1);
  });

  it('aborts at once when the caller aborts, without retrying', async () => {
    const controller = new AbortController();
    const { fetch, requests } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers/p-1/status': [
          () => {
            controller.abort(new Error('caller gave up'));
            return new TypeError('fetch failed');
          },
        ],
      }),
    );
    await expect(clientWith(fetch).status('p-1', { signal: controller.signal })).rejects.toThrow(
      'caller gave up',
    );
    expect(requests.filter((request) => request.url.endsWith('/status'))).toHaveLength(1);
  });

  it('times an attempt out and retries it', async () => {
    let calls = 0;
    const slowThenFast: typeof globalThis.fetch = async (input, init) => {
      if (String(input).endsWith('/oauth/token')) return tokenAnswer('t');
      calls++;
      if (calls === 1)
        return new Promise((_, reject) =>
          init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
        );
      return json(200, accepted);
    };
    const { report } = await clientWith(slowThenFast).status('p-1', { attemptTimeoutMs: 50 });
    expect(report?.status).toBe('Received');
    expect(calls).toBe(2);
  });
});

describe('status polling', () => {
  it('sends If-None-Match with the last ETag and treats a 304 as unchanged', async () => {
    const reports = [
      json(200, { ...accepted, status: 'AcceptedTechnicalValidation' }, { ETag: '"v1"' }),
      new Response(null, { status: 304, headers: { ETag: '"v1"' } }),
      json(
        200,
        { ...accepted, status: 'AcceptedSettlementCompleted', date: '2026-01-01T00:00:05.000Z' },
        { ETag: '"v2"' },
      ),
    ];
    const { fetch, requests } = fakeFetch(
      queued({ '/oauth/token': [tokenAnswer('t')], '/v1/payments/credit-transfers/p-1/status': reports }),
    );
    const seen: string[] = [];
    for await (const report of clientWith(fetch).watchStatus('p-1', {
      initialIntervalMs: 1,
      maxIntervalMs: 2,
    }))
      seen.push(report.status);
    expect(seen).toEqual(['AcceptedTechnicalValidation', 'AcceptedSettlementCompleted']);
    const statusRequests = requests.filter((request) => request.url.endsWith('/status'));
    expect(statusRequests.map((request) => request.headers.get('If-None-Match'))).toEqual([
      null,
      '"v1"',
      '"v1"',
    ]);
  });

  it('works against a service without ETags (every answer a 200)', async () => {
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers/p-1/status': [
          json(200, accepted),
          json(200, accepted),
          json(200, { ...accepted, status: 'Rejected', statusReason: 'BlockedAccount' }),
        ],
      }),
    );
    const final = await clientWith(fetch).waitForFinalStatus('p-1', {
      initialIntervalMs: 1,
      maxIntervalMs: 2,
    });
    expect(final).toMatchObject({ status: 'Rejected', statusReason: 'BlockedAccount' });
  });

  it('ends with WaitTimeoutError naming the last status when the timeout passes', async () => {
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers/p-1/status': [json(200, accepted)],
      }),
    );
    await expect(
      clientWith(fetch).waitForFinalStatus('p-1', {
        timeoutMs: 100,
        initialIntervalMs: 10,
        maxIntervalMs: 20,
      }),
    ).rejects.toMatchObject({ name: 'WaitTimeoutError', lastStatus: 'Received' });
  });
});

describe('listing', () => {
  it('follows Pagination-Cursor with the same filters until it is empty', async () => {
    const page = (items: string[], cursor: string) =>
      json(
        200,
        items.map((paymentId) => ({ ...accepted, paymentId })),
        { 'Pagination-Cursor': cursor, 'Pagination-Total': '3' },
      );
    const { fetch, requests } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers': [page(['a', 'b'], 'c1'), page(['c'], '')],
      }),
    );
    const ids: string[] = [];
    for await (const item of clientWith(fetch).list({ 'debtorAccountId.eq': 'acc-1' }, { limit: 2 }))
      ids.push(item.paymentId);
    expect(ids).toEqual(['a', 'b', 'c']);
    const queries = requests
      .filter((request) => request.url.includes('/credit-transfers?'))
      .map((request) => new URL(request.url).searchParams);
    expect(queries.map((query) => query.get('cursor'))).toEqual([null, 'c1']);
    expect(queries.map((query) => query.get('debtorAccountId.eq'))).toEqual(['acc-1', 'acc-1']);
    expect(queries.map((query) => query.get('limit'))).toEqual(['2', '2']);
  });
});

describe('answers and errors name their request', () => {
  it('carries requestId and replayed beside the body, which JSON shows exactly as sent', async () => {
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers': [
          json(202, accepted, { 'x-amzn-RequestId': 'r-1' }),
          json(202, accepted, { 'x-amzn-RequestId': 'r-2', 'Idempotent-Replayed': 'true' }),
        ],
      }),
    );
    const client = clientWith(fetch);
    const first = await client.initiate(transfer, { idempotencyId: 'k-1' });
    const again = await client.initiate(transfer, { idempotencyId: 'k-1' });
    expect([first.requestId, first.replayed]).toEqual(['r-1', false]);
    expect([again.requestId, again.replayed]).toEqual(['r-2', true]);
    expect(JSON.parse(JSON.stringify(again))).toEqual(accepted);
  });

  it('reads Pagination-Total, and N+ as a lower bound', async () => {
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers': [
          json(200, [accepted], { 'Pagination-Total': '10000+', 'x-amzn-RequestId': 'r-3' }),
        ],
      }),
    );
    const page = await clientWith(fetch).listPage({ 'status.eq': 'Received' });
    expect(page).toMatchObject({ total: 10000, totalIsLowerBound: true, requestId: 'r-3', replayed: false });
  });

  it('an API refusal names the call, its URL and its request id', async () => {
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers/p-9/status': [
          json(
            404,
            { error: 'not_found', error_description: 'No such transfer' },
            { 'x-amzn-RequestId': 'r-4' },
          ),
        ],
      }),
    );
    const error = (await clientWith(fetch)
      .status('p-9')
      .catch((caught: unknown) => caught)) as ApiError;
    expect(error).toMatchObject({
      call: 'api',
      method: 'GET',
      url: `${BASE}/v1/payments/credit-transfers/p-9/status`,
      error: 'not_found',
      requestId: 'r-4',
    });
    expect(error.describe()).toContain(`by the API (GET ${BASE}/v1/payments/credit-transfers/p-9/status)`);
  });

  it('a token endpoint answering without an error body of this API is told apart from the API', async () => {
    const { fetch } = fakeFetch(
      queued({ '/prefix/oauth/token': [new Response('<html>Not Found</html>', { status: 404 })] }),
    );
    const client = new CreditTransfersClient({
      baseUrl: `${BASE}/prefix`,
      clientId: 'c-1',
      clientSecret: SECRET,
      fetch,
      retry: FAST,
    });
    const error = (await client.listPage().catch((caught: unknown) => caught)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      call: 'token',
      status: 404,
      error: 'not_found',
      url: `${BASE}/prefix/oauth/token`,
    });
    expect(error.describe()).toMatch(/by the token endpoint \(POST .*\/prefix\/oauth\/token\)/);
  });

  it('a network error names the call and the URL it could not reach', async () => {
    const { fetch } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/payments/credit-transfers': [new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })],
      }),
    );
    const error = await clientWith(fetch)
      .listPage()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).message).toBe(
      `The API (GET ${BASE}/v1/payments/credit-transfers) could not be reached (ECONNREFUSED) after 4 attempts`,
    );
  });
});

describe('backoff', () => {
  it('grows exponentially up to the cap, with jitter below it', () => {
    const options = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4, 5].map((retry) => backoffDelay(retry, options, () => 1))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(backoffDelay(3, options, () => 0.5)).toBe(400);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});
