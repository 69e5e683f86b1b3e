import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { callApi, createClient, type JsonReply } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually } from './support/webhook-receiver.ts';

/**
 * Failed client authentication against the running local service, over HTTP. The window is
 * shortened (CLIENT_AUTH_THROTTLE_WINDOW_SECONDS) so a test can see it end; the failures of each
 * test are sent together, so a slow machine cannot stretch them over the window.
 */
const WINDOW_SECONDS = 15;
const CLIENT = {
  clientId: 'throttled-client',
  clientSecret: 'throttled-client-secret-0123',
  scope: 'transactions:read',
  tenant: 'throttle',
};

/** Secret checks an address may spend on unknown ids per window, before they are refused without one. */
const ADDRESS_BUDGET = 5;

const service = useLocalService({
  env: {
    CLIENT_AUTH_THROTTLE_WINDOW_SECONDS: String(WINDOW_SECONDS),
    CLIENT_AUTH_SECRET_CHECKS_PER_ADDRESS: String(ADDRESS_BUDGET),
    // Metrics printed (EMF lines on the service's output), so the skipped checks are seen.
    POWERTOOLS_METRICS_DISABLED: 'false',
  },
});

/** The SecretChecksSkipped counts the service printed so far (CloudWatch embedded metric format). */
const skippedChecks = (): number =>
  service
    .output()
    .split('\n')
    .filter((line) => line.includes('"SecretChecksSkipped"'))
    .map((line) => JSON.parse(line.slice(line.indexOf('{'))).SecretChecksSkipped as number | number[])
    .reduce<number>(
      (sum, value) => sum + (Array.isArray(value) ? value.reduce((a, b) => a + b, 0) : value),
      0,
    );

const tokenRequest = (clientId: string, clientSecret: string): Promise<JsonReply> =>
  callApi(service.baseUrl, '/oauth/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  });

const failTogether = (clientId: string, times: number): Promise<JsonReply[]> =>
  Promise.all(
    Array.from({ length: times }, (_, index) => tokenRequest(clientId, `wrong-secret-${index}-xxxxxxxx`)),
  );

/**
 * A token request straight to the service (the contract proxy would make every request come from
 * its own address), sent from `localAddress`: loopback is a whole range, so 127.0.0.2 is another client.
 */
const tokenRequestFrom = (localAddress: string, clientId: string, clientSecret: string): Promise<JsonReply> =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    });
    const sent = request(
      `${service.serviceUrl}/oauth/token`,
      {
        method: 'POST',
        localAddress,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            if (typeof value === 'string') headers.set(name, value);
          }
          resolve({
            status: response.statusCode ?? 0,
            headers,
            body: JSON.parse(Buffer.concat(chunks).toString() || 'null'),
          });
        });
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

const expectThrottled = (reply: JsonReply) => {
  expect(reply.status).toBe(429);
  const retryAfter = Number(reply.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(Math.min(WINDOW_SECONDS, 60));
  expect(reply.headers.get('content-type')).toBe('application/json');
  expect(reply.body).toMatchObject({
    error: 'rate_limited',
    status: 429,
    error_description: expect.any(String),
  });
  return retryAfter;
};

beforeAll(async () => {
  await createClient(service, CLIENT);
});

describe('failed client authentication on /oauth/token', () => {
  it('answers 10 wrong secrets with 401, then 429 with Retry-After even for the genuine secret, which works again once that time has passed', async () => {
    const failures = await failTogether(CLIENT.clientId, 10);
    expect(failures.map((reply) => reply.status)).toEqual(Array(10).fill(401));

    expectThrottled(await tokenRequest(CLIENT.clientId, 'yet-another-wrong-secret'));
    const retryAfter = expectThrottled(await tokenRequest(CLIENT.clientId, CLIENT.clientSecret));

    await sleep(retryAfter + 0.5);
    const genuine = await tokenRequest(CLIENT.clientId, CLIENT.clientSecret);
    expect(genuine.status).toBe(200);

    // The success started the count again: ten more wrong secrets are each a plain 401.
    const again = await failTogether(CLIENT.clientId, 10);
    expect(again.map((reply) => reply.status)).toEqual(Array(10).fill(401));
  }, 120_000);

  it('counts wrong secrets per source address: sent from 127.0.0.2 they never lock out the genuine client at 127.0.0.1', async () => {
    const client = { ...CLIENT, clientId: 'throttled-elsewhere' };
    await createClient(service, client);
    const wrong = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        tokenRequestFrom('127.0.0.2', client.clientId, `wrong-secret-${index}-xxxxxxxx`),
      ),
    );
    expect(wrong.map((reply) => reply.status)).toEqual(Array(10).fill(401));
    expectThrottled(await tokenRequestFrom('127.0.0.2', client.clientId, client.clientSecret));

    const genuine = await tokenRequestFrom('127.0.0.1', client.clientId, client.clientSecret);

    expect(genuine.status).toBe(200);
    expect(genuine.body.access_token).toEqual(expect.any(String));
  }, 120_000);

  it('never refuses a correct secret for requests still in flight: 11 (and 25) at once all get a token', async () => {
    const client = { ...CLIENT, clientId: 'throttled-busy' };
    await createClient(service, client);
    for (const count of [11, 25]) {
      const replies = await Promise.all(
        Array.from({ length: count }, () =>
          tokenRequestFrom('127.0.0.1', client.clientId, client.clientSecret),
        ),
      );
      expect(replies.map((reply) => reply.status)).toEqual(Array(count).fill(200));
    }
  }, 120_000);

  it('checks at most 10 of 20 wrong secrets sent at once: the others answer 429 without a check', async () => {
    const client = { ...CLIENT, clientId: 'throttled-at-once' };
    await createClient(service, client);
    const replies = await failTogether(client.clientId, 20);
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(10).fill(429)]);
  }, 120_000);

  it('throttles an unknown client id the same way, so the answer does not tell which ids exist', async () => {
    const failures = await failTogether('no-such-client', 10);
    expect(failures.map((reply) => reply.status)).toEqual(Array(10).fill(401));

    const unknown = await tokenRequest('no-such-client', 'wrong-secret-xxxxxxxx');
    expectThrottled(unknown);
    expect(Object.keys(unknown.body).sort()).toEqual([
      'detail',
      'error',
      'error_description',
      'status',
      'title',
      'type',
    ]);
  }, 120_000);
});

describe('a flood of made-up client ids from one address', () => {
  it('is refused past the address budget without a secret derivation, exactly as a wrong secret, and never refuses a correct secret', async () => {
    const client = { ...CLIENT, clientId: 'flooded-address' };
    await createClient(service, client);
    const before = skippedChecks();
    const flood = await Promise.all(
      Array.from({ length: 40 }, () =>
        tokenRequestFrom('127.0.0.3', `made-up-${randomUUID()}`, 'not-the-secret-xxxxxxxx'),
      ),
    );
    const wrongSecret = await tokenRequestFrom('127.0.0.3', client.clientId, 'not-the-secret-xxxxxxxx');
    const genuine = await tokenRequestFrom('127.0.0.3', client.clientId, client.clientSecret);

    expect(flood.map((reply) => reply.status)).toEqual(Array(40).fill(401));
    for (const reply of flood) expect(reply.body).toEqual(wrongSecret.body);
    expect(genuine.status).toBe(200);
    // A burst across a window's edge may be checked up to twice the budget.
    const skipped = await eventually(
      () => (skippedChecks() - before >= 40 - 2 * ADDRESS_BUDGET ? skippedChecks() - before : undefined),
      'the skipped secret checks',
    );
    expect(skipped).toBeLessThanOrEqual(40 - ADDRESS_BUDGET);
  }, 120_000);
});
