import { afterAll, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import {
  callApi,
  type LocalService,
  removeDataDir,
  requestToken,
  startLocalService,
} from './support/local-service.ts';

let service: LocalService | undefined;

afterAll(async () => {
  await service?.stop();
  if (service) await removeDataDir(service.dataDir);
});

it('keeps clients, payments and the signing key across a restart', async () => {
  service = await startLocalService();
  const token = await requestToken(service.baseUrl, 'transactions:read transactions:write');
  const created = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token,
    body: minimalCreditTransfer({ amount: '42.00' }),
    headers: { idempotencyId: 'restart-key' },
  });
  expect(created.status).toBe(202);
  const keysBefore = (await callApi(service.baseUrl, '/.well-known/jwks.json')).body;

  await service.stop();
  // Same port as before: the issuer is the base URL, as it would be for a user restarting `npm start`.
  const port = new URL(service.baseUrl).port;
  service = await startLocalService({ dataDir: service.dataDir, env: { PORT: port } });

  // A token issued before the restart still verifies: the signing key was kept.
  const reply = await callApi(
    service.baseUrl,
    `/v1/payments/credit-transfers/${created.body.paymentId}/status`,
    {
      token,
    },
  );
  expect(reply.status).toBe(200);
  expect(reply.body.paymentId).toBe(created.body.paymentId);
  expect(reply.body.amount).toBe('42.00');
  expect((await callApi(service.baseUrl, '/.well-known/jwks.json')).body).toEqual(keysBefore);

  // The idempotency key was kept too: the same request replays instead of paying twice.
  const replay = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token,
    body: minimalCreditTransfer({ amount: '42.00' }),
    headers: { idempotencyId: 'restart-key' },
  });
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.body.paymentId).toBe(created.body.paymentId);

  // And the client registered at the first start can still get tokens.
  await expect(requestToken(service.baseUrl)).resolves.toBeTypeOf('string');
});

it('stops dynalite with the service on SIGTERM, leaving the port free', async () => {
  const running = await startLocalService();
  const health = await fetch(`${running.baseUrl}/health`);
  expect(health.status).toBe(200);
  const endpoint = running.dynamodbEndpoint;
  await running.stop();
  await removeDataDir(running.dataDir);
  await expect(fetch(endpoint)).rejects.toThrow();
});
