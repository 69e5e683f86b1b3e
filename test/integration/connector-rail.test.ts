import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { type ConnectorStub, startConnectorStub } from '../support/connector-stub.ts';
import { callApi } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * The whole lifecycle against a bank's connector on loopback instead of the sandbox: the same
 * ASL, the connector rail behind the rail port. A refusal rejects with its reason; a connector
 * that is down, slow or answers garbage leaves the transfer waiting, never rejected, and it
 * carries on when the connector is back.
 */
const KEY = 'integration-connector-key-0123456789';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

let stub: ConnectorStub;
// The stub first (its URL is in the service's environment), stopped after the service.
beforeAll(async () => {
  stub = await startConnectorStub(KEY);
});
afterAll(async () => {
  await stub?.close();
});
const service = useLocalService({
  env: () => ({
    CONNECTOR_URL: stub.url,
    CONNECTOR_SECRET: KEY,
    CONNECTOR_TIMEOUT_MS: '300',
    CONNECTOR_MAX_ATTEMPTS: '2',
  }),
  token: true,
});

const initiate = async (debtorAccountId: string): Promise<string> => {
  const reply = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token: service.token,
    body: minimalCreditTransfer({ debtorAccountId }),
  });
  expect(reply.status).toBe(202);
  return String(reply.body.paymentId);
};

const status = async (paymentId: string) =>
  (
    await callApi(service.baseUrl, `/v1/payments/credit-transfers/${paymentId}/status`, {
      token: service.token,
    })
  ).body;

const finalStatus = async (paymentId: string, timeoutMs = 45_000) => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const body = await status(paymentId);
    if (FINAL.has(String(body.status))) return body;
    if (Date.now() > until) throw new Error(`${paymentId} still ${String(body.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

describe('lifecycle through the bank connector', () => {
  it('settles through the connector: checked, submitted once per payment, cleared; every call signed', async () => {
    const paymentId = await initiate('001-DDA-01-700001');
    const body = await finalStatus(paymentId);
    expect(body.status).toBe('AcceptedSettlementCompleted');
    expect(stub.submissions.get(paymentId)).toBeGreaterThanOrEqual(1);
    const calls = stub.calls.filter((call) => call.path.includes(paymentId));
    expect(calls.map((call) => call.path.split('/').at(-1))).toEqual(
      expect.arrayContaining(['customer-profile-check', 'submission', 'clearing-status']),
    );
    expect(calls.every((call) => call.signatureValid && call.idempotencyKey === paymentId)).toBe(true);
  });

  it('rejects with the bank’s reason when the connector refuses the customer profile', async () => {
    stub.refusals.set('001-DDA-01-700002', 'InsufficientFunds');
    const paymentId = await initiate('001-DDA-01-700002');
    const body = await finalStatus(paymentId);
    expect(body).toMatchObject({
      status: 'Rejected',
      statusReason: 'InsufficientFunds',
      statusReasonCode: 'AM04',
    });
    expect(stub.submissions.has(paymentId)).toBe(false);
  });

  it('passes the bank’s own ISO reason code through, with the name it gave or the code’s name', async () => {
    stub.refusals.set('001-DDA-01-700004', { reason: 'CreditorBankNotRegistered', reasonCode: 'DNOR' });
    stub.refusals.set('001-DDA-01-700005', { reasonCode: 'DUPL' });
    const [named, coded] = await Promise.all([
      initiate('001-DDA-01-700004').then(finalStatus),
      initiate('001-DDA-01-700005').then(finalStatus),
    ]);
    expect(named).toMatchObject({
      status: 'Rejected',
      statusReason: 'CreditorBankNotRegistered',
      statusReasonCode: 'DNOR',
    });
    expect(coded).toMatchObject({
      status: 'Rejected',
      statusReason: 'DuplicatePayment',
      statusReasonCode: 'DUPL',
    });
  });

  it('keeps a transfer waiting while the connector is down, and settles it once it is back', async () => {
    await stub.down();
    const paymentId = await initiate('001-DDA-01-700003');
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(FINAL.has(String((await status(paymentId)).status))).toBe(false);
    await stub.up();
    expect((await finalStatus(paymentId)).status).toBe('AcceptedSettlementCompleted');
  });

  for (const mode of ['garbage', 'slow'] as const) {
    it(`never rejects a transfer because the connector is ${mode}; it settles when the connector recovers`, async () => {
      stub.mode = mode;
      stub.slowMs = 2000;
      const paymentId = await initiate(`001-DDA-01-70001${mode.length}`);
      await new Promise((resolve) => setTimeout(resolve, 4000));
      const waiting = await status(paymentId);
      expect(waiting.status).not.toBe('Rejected');
      expect(FINAL.has(String(waiting.status))).toBe(false);
      stub.mode = 'normal';
      expect((await finalStatus(paymentId)).status).toBe('AcceptedSettlementCompleted');
    });
  }
});
