import { expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/** Polling the status report with If-None-Match: 304 while nothing changed, a new tag once it has. */
const TRANSFERS = '/v1/payments/credit-transfers';
const service = useLocalService({ token: 'transactions:read transactions:write' });

const status = (paymentId: string, headers: Record<string, string> = {}, accessToken = service.token) =>
  callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: accessToken, headers });

it('answers 200 with a tag, 304 while the report is unchanged, a new tag after a status change, and 404 to another tenant whatever its tag', async () => {
  // A held transfer stays in settlement until it is cancelled: its status changes when the test says.
  const created = await callApi(service.baseUrl, TRANSFERS, {
    token: service.token,
    body: minimalCreditTransfer({ debtorAccountId: '001-DDA-01-hold' }),
  });
  expect(created.status).toBe(202);
  const paymentId = created.body.paymentId as string;
  const deadline = Date.now() + 5000;
  let first = await status(paymentId);
  while (first.body.status !== 'AcceptedSettlementInProcess' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    first = await status(paymentId);
  }
  expect(first.status).toBe(200);
  const tag = first.headers.get('etag') as string;
  expect(tag).toMatch(/^"[^"]+"$/);
  expect(first.headers.get('cache-control')).toBe('private, no-cache');
  expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(0);

  const unchanged = await status(paymentId, { 'If-None-Match': tag });
  expect(unchanged.status).toBe(304);
  expect(unchanged.body).toBeUndefined();
  expect(unchanged.headers.get('etag')).toBe(tag);
  expect((await status(paymentId, { 'If-None-Match': `"elsewhere", ${tag}` })).status).toBe(304);

  expect(
    (
      await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/cancellation`, {
        method: 'POST',
        token: service.token,
      })
    ).status,
  ).toBe(202);
  let changed = await status(paymentId, { 'If-None-Match': tag });
  while (changed.status === 304 && Date.now() < deadline + 5000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    changed = await status(paymentId, { 'If-None-Match': tag });
  }
  expect(changed.status).toBe(200);
  expect(changed.body.status).toBe('Cancelled');
  const newTag = changed.headers.get('etag') as string;
  expect(newTag).not.toBe(tag);
  // Final: nothing more to wait for.
  expect(changed.headers.get('retry-after')).toBeNull();

  const intruder = { clientId: 'polling-intruder', clientSecret: 'polling-intruder-secret-0123' };
  await createClient(service, { ...intruder, scope: 'transactions:read', tenant: 'intruder' });
  const intruderToken = await requestToken(service.baseUrl, undefined, intruder);
  for (const ifNoneMatch of [newTag, '*']) {
    const peek = await status(paymentId, { 'If-None-Match': ifNoneMatch }, intruderToken);
    expect(peek.status).toBe(404);
    expect(peek.headers.get('etag')).toBeNull();
    expect(peek.body.error).toBe('not_found');
  }
});
