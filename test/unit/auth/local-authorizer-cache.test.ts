import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isAllowed } from '#adapters/access/route-policy';
import { createAuthorizer } from '#auth/authorizer';
import { signJwt } from '#domain/access/jwt';
import { createApiGateway } from '#local/api-gateway';
import type { Route } from '#routes';
import { AUDIENCE, authorizerSettings, clientsOf, ISSUER, muteLogger, testSigner } from './fakes.ts';

/**
 * The local server caches authorizer results per token, as API Gateway does; the cache must not
 * let a token in more than 30 s after its `exp`. The clock is faked (Date only), so the real
 * authorizer and the cache read the same time.
 */
const ROUTE: Route = {
  operationId: 'status',
  method: 'GET',
  path: '/v1/payments/credit-transfers/{paymentId}/status',
  entry: 'x.ts',
  scope: 'transactions:read',
  summary: '',
};

const T0 = new Date('2031-05-06T07:08:09.000Z');
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

let server: Server;
let baseUrl: string;

const shortLivedToken = (lifetimeSeconds: number) =>
  signJwt(
    {
      iss: ISSUER,
      sub: 'acme-payments',
      aud: AUDIENCE,
      iat: seconds(T0),
      exp: seconds(T0) + lifetimeSeconds,
      jti: crypto.randomUUID(),
      scope: 'transactions:read',
      tenant: 'acme',
      client_id: 'acme-payments',
    },
    testSigner(),
  );

const statusAt = async (token: string, secondsAfterT0: number): Promise<number> => {
  vi.setSystemTime(new Date(T0.getTime() + secondsAfterT0 * 1000));
  const response = await fetch(`${baseUrl}/v1/payments/credit-transfers/p-1/status`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  await response.arrayBuffer();
  return response.status;
};

beforeAll(async () => {
  muteLogger();
  const signer = testSigner();
  const clients = clientsOf({
    clientId: 'acme-payments',
    secretHash: 'scrypt$unused',
    scopes: ['transactions:read'],
    tenant: 'acme',
    createdAt: T0.toISOString(),
  });
  const listener = createApiGateway({
    routes: [
      {
        route: ROUTE,
        handler: async () => {
          return { statusCode: 200, body: '{}' };
        },
      },
    ],
    authorizer: createAuthorizer(() => ({
      keys: signer,
      clients,
      issuer: ISSUER,
      audience: AUDIENCE,
      routes: [ROUTE],
      ...authorizerSettings(),
    })),
    isAllowed,
  });
  server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe('the local authorizer cache', () => {
  it('accepts no token more than 30 s after its exp, even one cached just before it expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T0 });
    const token = await shortLivedToken(10);

    expect(await statusAt(token, 9)).toBe(200);
    expect(await statusAt(token, 10 + 31)).toBe(401);
  });

  it('serves a cached result a little after exp, as API Gateway does: the bound above is the cache time', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T0 });
    const token = await shortLivedToken(10);

    expect(await statusAt(token, 9)).toBe(200);
    expect(await statusAt(token, 12)).toBe(200);
  });
});
