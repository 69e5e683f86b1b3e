import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiGateway } from '#local/api-gateway';
import type { Route } from '#routes';

/**
 * The local gateway's per-tenant limit (TENANT_RATE_LIMIT): a token bucket per tenant, as the
 * stage's usage plans keep one per tenant. Only Date is faked, so the buckets refill on command.
 */
const ROUTE: Route = {
  operationId: 'status',
  method: 'GET',
  path: '/v1/payments/credit-transfers/{paymentId}/status',
  entry: 'x.ts',
  scope: 'transactions:read',
  summary: '',
};
const RATE = 2;

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2031-05-06T07:08:09.000Z'));
  const listener = createApiGateway({
    routes: [{ route: ROUTE, handler: async () => ({ statusCode: 200, body: '{}' }) }],
    // "Bearer <tenant>": this test is about the limit, not the token.
    authorizer: async (event) => {
      const tenant = String(event.headers?.authorization ?? event.headers?.Authorization).replace(
        /^Bearer /,
        '',
      );
      return {
        principalId: 'client',
        policyDocument: { Version: '2012-10-17', Statement: [] },
        // A tenant named "keyless" stands for an authorizer that names no API key.
        ...(tenant !== 'keyless' && { usageIdentifierKey: `key-of-${tenant}-padded-to-twenty` }),
        context: { tenant },
      };
    },
    isAllowed: () => true,
    tenantRateLimit: { ratePerSecond: RATE, burst: 2 * RATE },
  });
  server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  vi.useRealTimers();
  await new Promise((resolve) => server.close(resolve));
});

const statusFor = (tenant: string) =>
  fetch(`${baseUrl}/v1/payments/credit-transfers/p-1/status`, {
    headers: { Authorization: `Bearer ${tenant}` },
  });

describe('the local gateway with TENANT_RATE_LIMIT', () => {
  it("refuses a tenant past its burst with 429, Retry-After and the spec's body, and leaves other tenants alone", async () => {
    const flooding = [];
    for (let request = 0; request < 2 * RATE + 3; request++) flooding.push((await statusFor('flood')).status);
    expect(flooding.filter((status) => status === 200)).toHaveLength(2 * RATE);
    expect(flooding.slice(2 * RATE)).toEqual([429, 429, 429]);

    const refused = await statusFor('flood');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('content-type')).toMatch(/json/);
    expect(await refused.json()).toMatchObject({
      error: 'rate_limited',
      error_description: expect.any(String),
    });

    // Another tenant has a bucket of its own.
    expect((await statusFor('quiet')).status).toBe(200);

    // A second later the flooding tenant has RATE requests again.
    vi.setSystemTime(new Date(Date.now() + 1000));
    const after = [];
    for (let request = 0; request < RATE + 1; request++) after.push((await statusFor('flood')).status);
    expect(after).toEqual([...Array(RATE).fill(200), 429]);
  });
});

describe('the local gateway, as API Gateway with API keys required', () => {
  it('refuses a call whose authorizer names no API key with 403 and the problem body', async () => {
    const refused = await statusFor('keyless');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ status: 403, error: 'forbidden' });
  });
});
