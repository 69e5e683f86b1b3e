import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { type ConnectorStub, startConnectorStub } from '../support/connector-stub.ts';
import { callApi } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * A payment reaches clearing once, whatever runs twice: replays of an initiation (each starts the
 * fast path again, as Express may run an execution twice), a cancellation and its replays during
 * the submission, many repeats at once, and a restart after a crash during the submission. The
 * bank's connector stand-in counts every submission call it receives.
 */
const KEY = 'integration-submit-once-key-0123456789';
const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);
const LEASE_SECONDS = 3;

let stub: ConnectorStub;
beforeAll(async () => {
  stub = await startConnectorStub(KEY);
});
afterAll(async () => {
  await stub?.close();
});
beforeEach(() => {
  stub.delays.clear();
});
const service = useLocalService({
  env: () => ({
    CONNECTOR_URL: stub.url,
    CONNECTOR_SECRET: KEY,
    // Longer than any delay below: no call is retried for a timeout here.
    CONNECTOR_TIMEOUT_MS: '8000',
    SUBMISSION_LEASE_SECONDS: String(LEASE_SECONDS),
    RECONCILE_INTERVAL_SECONDS: '1',
  }),
  token: true,
});

const initiate = async (body: unknown, idempotencyId: string) => {
  const reply = await callApi(service.baseUrl, TRANSFERS, {
    token: service.token,
    body,
    headers: { idempotencyId },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(202);
  return String(reply.body.paymentId);
};

const status = async (paymentId: string) =>
  (await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: service.token })).body;

const finalStatus = async (paymentId: string, timeoutMs = 45_000) => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const body = await status(paymentId);
    if (FINAL.has(String(body.status))) return body;
    if (Date.now() > until) throw new Error(`${paymentId} still ${String(body.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

const until = async (condition: () => boolean, what: string, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

const callsOf = (paymentId: string) =>
  stub.calls
    .filter((call) => call.path.includes(`/${paymentId}/`))
    .map((call) => call.path.split('/').at(-1));

describe('every payment is submitted to clearing once', () => {
  it('three replays of an initiation while its customer-profile check is pending: one submission', async () => {
    stub.delays.set('customer-profile-check', 1500);
    const body = minimalCreditTransfer({ debtorAccountId: '001-DDA-01-800001' });
    const paymentId = await initiate(body, 'submit-once-replays');
    for (let replay = 0; replay < 3; replay++)
      expect(await initiate(body, 'submit-once-replays')).toBe(paymentId);
    expect((await finalStatus(paymentId)).status).toBe('AcceptedSettlementCompleted');
    // Every execution asked for the check; one submitted.
    expect(callsOf(paymentId).filter((call) => call === 'customer-profile-check').length).toBeGreaterThan(1);
    expect(stub.submissions.get(paymentId)).toBe(1);
  });

  it('a cancellation and its replays during the submission call: one submission, then clearing decides', async () => {
    stub.delays.set('submission', 1500);
    const paymentId = await initiate(
      minimalCreditTransfer({ debtorAccountId: '001-DDA-01-800002' }),
      'submit-once-cancel',
    );
    await until(() => stub.submissions.has(paymentId), 'the submission call');
    for (let request = 0; request < 3; request++) {
      const reply = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/cancellation`, {
        token: service.token,
        body: {},
        headers: { idempotencyId: 'submit-once-cancel-request' },
      });
      expect([202, 409]).toContain(reply.status);
    }
    expect(FINAL.has(String((await finalStatus(paymentId)).status))).toBe(true);
    expect(stub.submissions.get(paymentId)).toBe(1);
  });

  it('30 transfers each initiated 3 or 4 times at once: one submission each', async () => {
    const keys = Array.from({ length: 30 }, (_, index) => `submit-once-burst-${index}`);
    const answers = await Promise.all(
      keys.flatMap((key, index) =>
        Array.from({ length: 3 + (index % 2) }, () =>
          initiate(
            minimalCreditTransfer({ debtorAccountId: '001-DDA-01-800003', amount: `${index + 1}.00` }),
            key,
          ),
        ),
      ),
    );
    const paymentIds = [...new Set(answers)];
    expect(paymentIds).toHaveLength(30);
    for (const paymentId of paymentIds)
      expect((await finalStatus(paymentId)).status).toBe('AcceptedSettlementCompleted');
    expect(paymentIds.map((paymentId) => stub.submissions.get(paymentId))).toEqual(paymentIds.map(() => 1));
  });

  it('a restart after a SIGKILL during the submission call asks clearing first and does not submit again', async () => {
    stub.delays.set('submission', 5000);
    const paymentId = await initiate(
      minimalCreditTransfer({ debtorAccountId: '001-DDA-01-800004' }),
      'submit-once-kill',
    );
    await until(() => stub.submissions.has(paymentId), 'the submission call');
    await service.kill();
    stub.delays.clear();
    await service.startAgain();
    expect((await finalStatus(paymentId)).status).toBe('AcceptedSettlementCompleted');
    expect(stub.submissions.get(paymentId)).toBe(1);
    // The restart's first call about the payment was the status inquiry.
    const afterTheSubmission = callsOf(paymentId).slice(callsOf(paymentId).indexOf('submission') + 1);
    expect(afterTheSubmission[0]).toBe('clearing-status');
  });

  it('a restart after a SIGKILL before clearing had the payment submits it once the claim lapsed', async () => {
    // The claim is written, then the process dies before the submission reaches clearing: the
    // customer-profile check answers late, the claim is in the same write as its outcome.
    stub.delays.set('customer-profile-check', 1500);
    const paymentId = await initiate(
      minimalCreditTransfer({ debtorAccountId: '001-DDA-01-800005' }),
      'submit-once-kill-early',
    );
    await until(() => callsOf(paymentId).includes('customer-profile-check'), 'the check');
    stub.delays.set('submission', 60_000);
    // Killed while the submission call waits: clearing counts it on arrival, so take it back out.
    await until(() => stub.submissions.has(paymentId), 'the submission call');
    await service.kill();
    stub.submissions.delete(paymentId);
    stub.delays.clear();
    await service.startAgain();
    expect((await finalStatus(paymentId)).status).toBe('AcceptedSettlementCompleted');
    // Asked clearing, which lacked it; submitted again only after the lease of the dead claim.
    expect(stub.submissions.get(paymentId)).toBe(1);
    const restartCalls = callsOf(paymentId).slice(callsOf(paymentId).indexOf('submission') + 1);
    expect(restartCalls.indexOf('clearing-status')).toBeLessThan(restartCalls.indexOf('submission'));
  });
});
