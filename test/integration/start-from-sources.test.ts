import { afterAll, beforeAll, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import {
  callApi,
  type LocalService,
  removeDataDir,
  requestToken,
  startLocalService,
} from './support/local-service.ts';

/**
 * Every other suite runs the service from the run's build (test/support/local-build.ts); this one
 * runs it from its sources through tsx, as `npm start` does, so what the build changes (one
 * module graph, files found beside their sources) cannot hide a start that fails from the sources.
 */
let service: LocalService;

beforeAll(async () => {
  service = await startLocalService({ fromSources: true });
});

afterAll(async () => {
  await service?.stop();
  if (service) await removeDataDir(service.dataDir);
});

it('issues a token, and settles a transfer through the workflow and its handlers', async () => {
  const token = await requestToken(service.baseUrl);
  const created = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token,
    body: minimalCreditTransfer(),
  });
  expect(created.status).toBe(202);
  const statusPath = `/v1/payments/credit-transfers/${created.body.paymentId}/status`;
  const deadline = Date.now() + 60_000;
  let reply = await callApi(service.baseUrl, statusPath, { token });
  while (reply.body?.status !== 'AcceptedSettlementCompleted' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    reply = await callApi(service.baseUrl, statusPath, { token });
  }
  expect(reply.body?.status).toBe('AcceptedSettlementCompleted');
});
