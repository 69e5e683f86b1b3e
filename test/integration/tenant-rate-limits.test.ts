import { describe, expect, it } from 'vitest';
import { callApi, type JsonReply, requestToken } from './support/local-service.ts';
import { runScript } from './support/scripts.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * A per-tenant limit set with `npm run clients -- set-limit` on the running local service: with
 * TENANT_RATE_LIMIT set (high here, so the default stops no one), the limited tenant is refused
 * past its own burst with 429, Retry-After and the problem body, another tenant is not.
 */
const service = useLocalService({ env: { TENANT_RATE_LIMIT: '1000' } });
const clients = (...args: string[]) => runScript(service, 'clients', ...args);

const SECRET = 'a-test-secret-of-enough-length';

const clientOf = async (clientId: string, tenant: string): Promise<string> => {
  const created = await clients(
    'create',
    '--client-id',
    clientId,
    '--scope',
    'transactions:read',
    '--tenant',
    tenant,
    '--client-secret',
    SECRET,
  );
  expect(created.code, created.stderr).toBe(0);
  return requestToken(service.baseUrl, 'transactions:read', { clientId, clientSecret: SECRET });
};

const list = (token: string): Promise<JsonReply> =>
  callApi(service.baseUrl, '/v1/payments/credit-transfers', { token });

describe('per-tenant limits set with npm run clients', () => {
  it("refuse the limited tenant past its burst with 429, Retry-After and the spec's body, and no other", async () => {
    const limitedToken = await clientOf('limited-client', 'limited');
    const freeToken = await clientOf('free-client', 'free');

    const set = await clients('set-limit', '--tenant', 'limited', '--rate', '1', '--burst', '2');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/limited: 1 requests per second, bursts of 2/);
    const shown = await clients('show-limit', '--tenant', 'limited');
    expect(shown.stdout).toMatch(/1 requests per second, bursts of 2 \(its own limit\)/);

    const limited: JsonReply[] = [];
    for (let request = 0; request < 5; request++) limited.push(await list(limitedToken));
    const statuses = limited.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(3);
    const refused = limited.find((reply) => reply.status === 429);
    expect(refused, statuses.join(' ')).toBeDefined();
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused?.headers.get('content-type')).toBe('application/problem+json');
    expect(refused?.body).toMatchObject({
      status: 429,
      error: 'rate_limited',
      error_description: expect.any(String),
    });

    const free: number[] = [];
    for (let request = 0; request < 10; request++) free.push((await list(freeToken)).status);
    expect(free).toEqual(Array(10).fill(200));

    const cleared = await clients('clear-limit', '--tenant', 'limited');
    expect(cleared.stdout).toMatch(/the default limit applies again/);
    expect((await clients('show-limit')).stdout).toMatch(/No tenant has a limit of its own/);
  });
});
