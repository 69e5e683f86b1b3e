import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  CreditTransfersClient,
  CreditTransfersError,
  NetworkError,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '../../client/src/index.ts';
import { fakeFetch, json, queued, tokenAnswer } from './fake-fetch.ts';

const BASE = 'https://api.example.test';
const FAST = { baseDelayMs: 1, maxDelayMs: 2, attempts: 4 };
const SECRET = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`;
const OLD_SECRET = `whsec_${Buffer.from('the secret before the rotation.').toString('base64')}`;

const clientWith = (fetch: typeof globalThis.fetch) =>
  new CreditTransfersClient({
    baseUrl: BASE,
    clientId: 'c-1',
    clientSecret: 'client-secret',
    fetch,
    retry: FAST,
  });

const statusEvent = (id: string, createdAt: string, sequence = 0): WebhookEvent => ({
  id,
  type: 'credit-transfer.status-changed',
  createdAt,
  data: { paymentId: 'p-1', status: 'Received', date: createdAt, sequence },
});

/** A delivery as the service sends one, signed by the Standard Webhooks library with each secret. */
const signed = (body: string, secrets: string[], at = new Date(), id = 'evt-1') => ({
  body,
  headers: {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  },
});

const reasonOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toBeInstanceOf(CreditTransfersError);
    return (error as WebhookVerificationError).reason;
  }
  return 'verified';
};

describe('verifyWebhook', () => {
  const body = JSON.stringify(statusEvent('evt-1', '2026-11-24T10:00:00.000Z'));

  it('answers the typed event of a request signed with the secret, the raw body as a string or bytes', () => {
    const { headers } = signed(body, [SECRET]);
    const event = verifyWebhook(body, headers, SECRET);
    expect(event).toEqual(JSON.parse(body));
    if (event.type === 'credit-transfer.status-changed') expect(event.data.status).toBe('Received');
    expect(verifyWebhook(new TextEncoder().encode(body), new Headers(headers), [SECRET]).id).toBe('evt-1');
  });

  it('during a rotation verifies a request signed with both secrets with either, and one of several held', () => {
    const { headers } = signed(body, [OLD_SECRET, SECRET]);
    expect(verifyWebhook(body, headers, OLD_SECRET).id).toBe('evt-1');
    expect(verifyWebhook(body, headers, SECRET).id).toBe('evt-1');
    const newOnly = signed(body, [SECRET]).headers;
    expect(verifyWebhook(body, newOnly, [OLD_SECRET, SECRET]).id).toBe('evt-1');
    expect(reasonOf(() => verifyWebhook(body, newOnly, OLD_SECRET))).toBe('no_matching_signature');
  });

  it('refuses a changed body, a stale or future timestamp, missing headers, and a signed body that is not an event', () => {
    const { headers } = signed(body, [SECRET]);
    expect(reasonOf(() => verifyWebhook(body.replace('Received', 'Rejected'), headers, SECRET))).toBe(
      'no_matching_signature',
    );
    const stale = signed(body, [SECRET], new Date(Date.now() - 6 * 60_000));
    expect(reasonOf(() => verifyWebhook(body, stale.headers, SECRET))).toBe('timestamp_too_old');
    const future = signed(body, [SECRET], new Date(Date.now() + 6 * 60_000));
    expect(reasonOf(() => verifyWebhook(body, future.headers, SECRET))).toBe('timestamp_too_new');
    const { 'webhook-id': _, ...noId } = headers;
    expect(reasonOf(() => verifyWebhook(body, noId, SECRET))).toBe('missing_headers');
    expect(reasonOf(() => verifyWebhook(body, { ...headers, 'webhook-timestamp': 'soon' }, SECRET))).toBe(
      'invalid_timestamp',
    );
    const notEvent = signed('{"hello":"world"}', [SECRET]);
    expect(reasonOf(() => verifyWebhook(notEvent.body, notEvent.headers, SECRET))).toBe('invalid_body');
  });

  it('reads node:http headers in any case, a repeated signature header as an array', () => {
    const { headers } = signed(body, [OLD_SECRET, SECRET]);
    const [first, second] = headers['webhook-signature'].split(' ');
    const nodeHeaders = {
      'Webhook-Id': headers['webhook-id'],
      'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'],
      'webhook-signature': [first ?? '', second ?? ''],
    };
    expect(verifyWebhook(body, nodeHeaders, SECRET).id).toBe('evt-1');
  });
});

describe('webhook endpoint calls', () => {
  it('registers an endpoint once only when the service may have acted: no retry after a 503 or a cut connection', async () => {
    const { fetch, requests } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/webhook-endpoints': [json(503, { error: 'service_unavailable', error_description: 'later' })],
      }),
    );
    await expect(
      clientWith(fetch).webhooks.create({ url: 'https://hooks.example.com/x' }),
    ).rejects.toMatchObject({
      status: 503,
    });
    expect(
      requests.filter(
        (request) => request.method === 'POST' && request.url.endsWith('/v1/webhook-endpoints'),
      ),
    ).toHaveLength(1);

    const reset = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/webhook-endpoints': [new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } })],
      }),
    );
    const error = await clientWith(reset.fetch)
      .webhooks.create({ url: 'https://hooks.example.com/x' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).attempts).toBe(1);
    expect((error as NetworkError).message).toMatch(/could not be reached \(ECONNRESET\) after 1 attempt$/);
    expect(reset.requests.filter((request) => request.url.endsWith('/v1/webhook-endpoints'))).toHaveLength(1);
  });

  it('registers after a 429 or a refused connection, which the service never acted on', async () => {
    const created = {
      id: 'e-1',
      url: 'https://hooks.example.com/x',
      eventTypes: [],
      status: 'enabled',
      createdAt: '2026-11-24T10:00:00.000Z',
      secret: SECRET,
    };
    const { fetch, requests } = fakeFetch(
      queued({
        '/oauth/token': [tokenAnswer('t')],
        '/v1/webhook-endpoints': [
          json(429, { error: 'rate_limited', error_description: 'slow down' }, { 'Retry-After': '0' }),
          new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }),
          json(201, created),
        ],
      }),
    );
    expect(await clientWith(fetch).webhooks.create({ url: created.url })).toEqual(created);
    expect(requests.filter((request) => request.url.endsWith('/v1/webhook-endpoints'))).toHaveLength(3);
  });

  it('retries a secret rotation like other calls, and pages endpoints by cursor', async () => {
    const endpoint = (id: string) => ({
      id,
      url: 'https://h.example.com',
      eventTypes: [],
      status: 'enabled',
      createdAt: '2026-11-24T10:00:00.000Z',
    });
    const { fetch, requests } = fakeFetch((request) => {
      const url = new URL(request.url);
      if (url.pathname === '/oauth/token') return tokenAnswer('t');
      if (url.pathname === '/v1/webhook-endpoints/e-1/secret-rotation')
        return requests.filter((each) => each.url === request.url).length === 1
          ? json(503, { error: 'service_unavailable', error_description: 'later' })
          : json(200, {
              ...endpoint('e-1'),
              secret: SECRET,
              previousSecretExpiresAt: '2026-11-25T10:00:00.000Z',
            });
      if (url.pathname === '/v1/webhook-endpoints')
        return url.searchParams.get('cursor') === null
          ? json(200, [endpoint('e-1')], { 'Pagination-Cursor': 'next' })
          : json(200, [endpoint('e-2')], { 'Pagination-Cursor': '' });
      return undefined;
    });
    const client = clientWith(fetch);
    expect((await client.webhooks.rotateSecret('e-1')).secret).toBe(SECRET);
    const ids: string[] = [];
    for await (const each of client.webhooks.list({ limit: 1 })) ids.push(each.id);
    expect(ids).toEqual(['e-1', 'e-2']);
    const listing = requests.filter((request) => new URL(request.url).pathname === '/v1/webhook-endpoints');
    expect(listing.map((request) => new URL(request.url).search)).toEqual([
      '?limit=1',
      '?cursor=next&limit=1',
    ]);
  });
});

describe('events', () => {
  it('follow yields each event once, looking again from the last createdAt seen', async () => {
    const e1 = statusEvent('e-1', '2026-11-24T10:00:00.000Z');
    const e2 = statusEvent('e-2', '2026-11-24T10:00:01.000Z', 1);
    const e2b = statusEvent('e-2b', '2026-11-24T10:00:01.000Z', 2);
    const e3 = statusEvent('e-3', '2026-11-24T10:00:02.000Z', 3);
    const looks = [[e1, e2], [e2, e2b, e3], [e3]];
    const { fetch, requests } = fakeFetch((request) => {
      const url = new URL(request.url);
      if (url.pathname === '/oauth/token') return tokenAnswer('t');
      if (url.pathname === '/v1/events') return json(200, looks.shift() ?? [], { 'Pagination-Cursor': '' });
      return undefined;
    });
    const abort = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const event of clientWith(fetch).events.follow(
        { type: 'credit-transfer.status-changed', 'createdAt.gte': '2026-11-24T09:00:00.000Z' },
        { intervalMs: 1, signal: abort.signal },
      )) {
        seen.push(event.id);
        if (event.id === 'e-3') abort.abort();
      }
    })();
    await expect(following).rejects.toThrow();
    expect(seen).toEqual(['e-1', 'e-2', 'e-2b', 'e-3']);
    const froms = requests
      .filter((request) => new URL(request.url).pathname === '/v1/events')
      .map((request) => new URL(request.url).searchParams.get('createdAt.gte'));
    expect(froms).toEqual(['2026-11-24T09:00:00.000Z', '2026-11-24T10:00:01.000Z']);
  });

  it('follow keeps the cursor the list hands back with recent events, and yields a repeat once', async () => {
    const e1 = statusEvent('e-1', '2026-11-24T10:00:00.000Z');
    const e2 = statusEvent('e-2', '2026-11-24T10:00:01.000Z', 1);
    const e3 = statusEvent('e-3', '2026-11-24T10:00:02.000Z', 2);
    const looks: [unknown[], string][] = [
      [[e1], 'c-1'],
      [[e1, e2], 'c-2'],
      [[e2, e3], ''],
    ];
    const { fetch, requests } = fakeFetch((request) => {
      const url = new URL(request.url);
      if (url.pathname === '/oauth/token') return tokenAnswer('t');
      if (url.pathname === '/v1/events') {
        const [items, cursor] = looks.shift() ?? [[], ''];
        return json(200, items, { 'Pagination-Cursor': cursor });
      }
      return undefined;
    });
    const abort = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const event of clientWith(fetch).events.follow(
        { 'createdAt.gte': '2026-11-24T09:00:00.000Z' },
        { intervalMs: 1, signal: abort.signal },
      )) {
        seen.push(event.id);
        if (event.id === 'e-3') abort.abort();
      }
    })();
    await expect(following).rejects.toThrow();
    expect(seen).toEqual(['e-1', 'e-2', 'e-3']);
    const looked = requests
      .filter((request) => new URL(request.url).pathname === '/v1/events')
      .map((request) => new URL(request.url).searchParams);
    expect(looked.map((query) => query.get('cursor'))).toEqual([null, 'c-1', 'c-2']);
    expect(looked.map((query) => query.get('createdAt.gte'))).toEqual(
      Array(3).fill('2026-11-24T09:00:00.000Z'),
    );
  });

  it('list ends on a page that brings no new event, though it hands back a cursor', async () => {
    const e1 = statusEvent('e-1', '2026-11-24T10:00:00.000Z');
    const { fetch } = fakeFetch((request) => {
      const url = new URL(request.url);
      if (url.pathname === '/oauth/token') return tokenAnswer('t');
      if (url.pathname === '/v1/events') return json(200, [e1], { 'Pagination-Cursor': 'at-the-horizon' });
      return undefined;
    });
    const listed: string[] = [];
    for await (const event of clientWith(fetch).events.list()) listed.push(event.id);
    expect(listed).toEqual(['e-1']);
  });
});
