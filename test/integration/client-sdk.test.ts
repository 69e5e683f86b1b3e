import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ApiError, CreditTransfersClient } from '../../client/src/index.ts';
import { startConnectionKillingProxy, startHttpProxy } from '../client/proxies.ts';
import { callApi, LOCAL_CLIENT } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const TOKEN_LIFETIME_SECONDS = 2;
const service = useLocalService({
  env: { LOCAL_ACCESS_TOKEN_LIFETIME_SECONDS: String(TOKEN_LIFETIME_SECONDS) },
});

const claims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { iat: number; exp: number };

const sdk = (options: { baseUrl?: string; tokenUrl?: string } = {}) =>
  new CreditTransfersClient({
    baseUrl: options.baseUrl ?? service.baseUrl,
    clientId: LOCAL_CLIENT.clientId,
    clientSecret: LOCAL_CLIENT.clientSecret,
    ...(options.tokenUrl !== undefined && { tokenUrl: options.tokenUrl }),
    retry: { baseDelayMs: 50, maxDelayMs: 200 },
  });

const transfer = (debtorAccountId: string) => ({
  paymentMethod: 'CreditTransfer',
  amount: '10.00',
  currency: 'EUR',
  debtorAccountId,
});

describe('SDK against the local service', () => {
  it('obtains a new token once the short-lived one is near expiry, never using the expired one', async () => {
    const apiProxy = await startHttpProxy(service.baseUrl);
    const client = sdk({ baseUrl: apiProxy.url, tokenUrl: `${service.baseUrl}/oauth/token` });
    const first = await client.tokens.accessToken();
    expect(claims(first).exp - claims(first).iat).toBe(TOKEN_LIFETIME_SECONDS);
    await new Promise((resolve) => setTimeout(resolve, (TOKEN_LIFETIME_SECONDS + 1) * 1000));
    // The first token was never shown to the service, so no authorizer cache can hide its expiry.
    const refused = await callApi(service.baseUrl, '/v1/payments/credit-transfers?limit=1', { token: first });
    expect(refused.status).toBe(401);
    const page = await client.listPage({}, { limit: 1 });
    expect(Array.isArray(page.items)).toBe(true);
    expect(client.tokens.issued).toBe(2);
    // Renewed before use, not after a refusal: the expired token never reached the API.
    expect(apiProxy.seen.map((request) => request.authorization)).toEqual([
      `Bearer ${await client.tokens.accessToken()}`,
    ]);
    await apiProxy.close();
  });

  it('renews the token once and retries when the service refuses it with a 401', async () => {
    let tokens = 0;
    // The first token comes back with a broken signature: the service itself answers 401.
    const tokenProxy = await startHttpProxy(service.baseUrl, {
      transform: (request, body) => {
        if (request.path !== '/oauth/token' || tokens++ > 0) return body;
        const answer = JSON.parse(body) as { access_token: string };
        const token = answer.access_token;
        const broken = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
        return JSON.stringify({ ...answer, access_token: broken });
      },
    });
    try {
      const client = sdk({ tokenUrl: `${tokenProxy.url}/oauth/token` });
      const page = await client.listPage({}, { limit: 1 });
      expect(Array.isArray(page.items)).toBe(true);
      expect(tokens).toBe(2);
    } finally {
      await tokenProxy.close();
    }
  });

  it('a retry after a killed connection makes exactly one payment', async () => {
    const proxy = await startConnectionKillingProxy(service.baseUrl);
    const account = `acc-${randomUUID().slice(0, 8)}`;
    try {
      const client = sdk({ baseUrl: proxy.url, tokenUrl: `${service.baseUrl}/oauth/token` });
      const answer = await client.initiate(transfer(account));
      expect(proxy.killed()).toBe(1);
      expect(proxy.connections()).toBeGreaterThanOrEqual(2);
      const listed = [];
      for await (const item of sdk().list({ 'debtorAccountId.eq': account })) listed.push(item.paymentId);
      expect(listed).toEqual([answer.paymentId]);
    } finally {
      await proxy.close();
    }
  });

  it('waits for a final status and walks every page of a list', async () => {
    const client = sdk();
    const account = `acc-${randomUUID().slice(0, 8)}`;
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await client.initiate(transfer(account))).paymentId);
    const final = await client.waitForFinalStatus(made[0] as string, { timeoutMs: 60_000 });
    expect(final.status).toBe('AcceptedSettlementCompleted');
    const pages = [];
    for await (const page of client.pages({ 'debtorAccountId.eq': account }, { limit: 2 }))
      pages.push(page.items.length);
    expect(pages).toEqual([2, 2, 1]);
    const listed = [];
    for await (const item of client.list({ 'debtorAccountId.eq': account }, { limit: 2 }))
      listed.push(item.paymentId);
    expect(listed).toEqual([...made].reverse());
  });

  it('answers carry the request id the service sent and whether an idempotent repeat was replayed', async () => {
    const client = sdk();
    const key = randomUUID();
    const first = await client.initiate(transfer(`acc-${randomUUID().slice(0, 8)}`), { idempotencyId: key });
    const again = await client.initiate(transfer(first.debtorAccountId), { idempotencyId: key });
    expect(again.paymentId).toBe(first.paymentId);
    expect([first.replayed, again.replayed]).toEqual([false, true]);
    expect(first.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(again.requestId).not.toBe(first.requestId);
    const status = await client.status(first.paymentId);
    expect(status.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(status.report.paymentId).toBe(first.paymentId);
    const refused = (await client.status(randomUUID()).catch((caught: unknown) => caught)) as ApiError;
    expect(refused).toMatchObject({ status: 404, error: 'not_found', call: 'api' });
    expect(refused.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refusals carry the service error, description, status and invalidParams', async () => {
    const error = await sdk()
      .initiate({ ...transfer('acc-x'), amount: '12.345678901' })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ApiError', status: 400, error: 'invalid_request' });
    expect(
      (error as { invalidParams: { name: string }[] }).invalidParams.map((param) => param.name),
    ).toContain('amount');
  });
});
