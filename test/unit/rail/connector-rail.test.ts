import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ConnectorProtocolError,
  ConnectorRail,
  type ConnectorSettings,
  ConnectorUnavailableError,
} from '#adapters/credit-transfers/connector-rail';
import { connectorSettings, connectorSigningKey } from '#adapters/credit-transfers/rail';
import type { RailPayment } from '#domain/credit-transfers/ports';
import { logger } from '#shared/logger';
import { metrics, UNKNOWN_STATUS_REASON_CODES_METRIC } from '#shared/metrics';
import { type ConnectorStub, startConnectorStub } from '../../support/connector-stub.ts';

const KEY = 'connector-test-key-0123456789abcdef';

const payment = (paymentId: string, debtorAccountId = '001-DDA-01-123456'): RailPayment => ({
  tenant: 'tenant-a',
  paymentId,
  clientId: 'client-a',
  transfer: { paymentMethod: 'CreditTransfer', amount: '10.00', currency: 'EUR', debtorAccountId },
});

let stub: ConnectorStub;
const settings = (overrides: Partial<ConnectorSettings> = {}): ConnectorSettings => ({
  baseUrl: new URL(stub.url),
  // Generous, so a loaded machine does not turn an answer into a timeout; the slow tests set their own.
  timeoutMs: 2000,
  maxAttempts: 3,
  backoffMs: 10,
  deadlineMs: 5000,
  ...overrides,
});
const rail = (overrides: Partial<ConnectorSettings> = {}, key = KEY) =>
  new ConnectorRail(settings(overrides), async () => key);

beforeAll(async () => {
  stub = await startConnectorStub(KEY);
});
afterAll(() => stub.close());
afterEach(async () => {
  stub.mode = 'normal';
  stub.calls.length = 0;
  await stub.up();
});

describe('connector rail', () => {
  it('passes the bank’s acceptance and its refusal with the reason, signed and keyed by paymentId', async () => {
    stub.refusals.set('acc-refused', 'InsufficientFunds');
    await expect(rail().checkCustomerProfile(payment('p-accept'))).resolves.toEqual({ accepted: true });
    await expect(rail().checkCustomerProfile(payment('p-refuse', 'acc-refused'))).resolves.toEqual({
      accepted: false,
      reason: 'InsufficientFunds',
    });
    expect(stub.calls.map((call) => [call.idempotencyKey, call.signatureValid])).toEqual([
      ['p-accept', true],
      ['p-refuse', true],
    ]);
  });

  it('submits, reads clearing status and recalls through the contract’s paths', async () => {
    stub.clearingRejections.set('p-cleared-rejected', 'ClosedAccountNumber');
    await rail().submit(payment('p-settles'));
    await rail().submit(payment('p-settles'));
    await rail().submit(payment('p-cleared-rejected'));
    expect(stub.submissions.get('p-settles')).toBe(2);
    await expect(rail().clearingStatus(payment('p-settles'))).resolves.toEqual({ state: 'settled' });
    await expect(rail().clearingStatus(payment('p-cleared-rejected'))).resolves.toEqual({
      state: 'rejected',
      reason: 'ClosedAccountNumber',
    });
    await expect(rail().recall(payment('p-settles'))).resolves.toBe('recalled');
    expect(stub.calls.map((call) => `${call.method} ${call.path}`)).toContain(
      'GET /connector/payments/p-settles/clearing-status',
    );
  });

  it('passes an ISO reason code through; keeps a code outside ISO’s set only as a narrative (NARR), logged and counted', async () => {
    stub.refusals.set('acc-iso-code', { reason: 'InsufficientFunds', reasonCode: 'AM14' });
    stub.refusals.set('acc-code-alone', { reasonCode: 'DNOR' });
    stub.refusals.set('acc-unknown-named', { reason: 'LimitExceededAtBank', reasonCode: 'ZZ99' });
    stub.refusals.set('acc-unknown-alone', { reasonCode: 'X1Y2' });
    const warn = vi.spyOn(logger, 'warn');
    const addMetric = vi.spyOn(metrics, 'addMetric');
    try {
      await expect(rail().checkCustomerProfile(payment('p-iso', 'acc-iso-code'))).resolves.toEqual({
        accepted: false,
        reason: 'InsufficientFunds',
        reasonCode: 'AM14',
      });
      await expect(rail().checkCustomerProfile(payment('p-alone', 'acc-code-alone'))).resolves.toEqual({
        accepted: false,
        reason: 'DebtorBankIsNotRegistered',
        reasonCode: 'DNOR',
      });
      expect(addMetric).not.toHaveBeenCalled();
      await expect(rail().checkCustomerProfile(payment('p-unknown', 'acc-unknown-named'))).resolves.toEqual({
        accepted: false,
        reason: 'LimitExceededAtBank',
        reasonCode: 'NARR',
      });
      await expect(rail().checkCustomerProfile(payment('p-unknown-2', 'acc-unknown-alone'))).resolves.toEqual(
        {
          accepted: false,
          reason: 'X1Y2',
          reasonCode: 'NARR',
        },
      );
      expect(addMetric.mock.calls.map(([name, , value]) => [name, value])).toEqual([
        [UNKNOWN_STATUS_REASON_CODES_METRIC, 1],
        [UNKNOWN_STATUS_REASON_CODES_METRIC, 1],
      ]);
      expect(warn.mock.calls.map(([, extra]) => extra)).toEqual([
        { paymentId: 'p-unknown', reasonCode: 'ZZ99', reason: 'LimitExceededAtBank' },
        { paymentId: 'p-unknown-2', reasonCode: 'X1Y2', reason: undefined },
      ]);
    } finally {
      warn.mockRestore();
      addMetric.mockRestore();
    }
  });

  it('never turns an unreachable connector into a refusal: it retries, then throws', async () => {
    await stub.down();
    const outcome = rail().checkCustomerProfile(payment('p-down'));
    await expect(outcome).rejects.toBeInstanceOf(ConnectorUnavailableError);
    await expect(outcome).rejects.toMatchObject({ name: 'ConnectorUnavailableError' });
  });

  it('bounds a slow connector by the timeout and tries again, each attempt bounded', async () => {
    stub.mode = 'slow';
    stub.slowMs = 5000;
    const started = Date.now();
    await expect(rail({ timeoutMs: 200, maxAttempts: 2 }).submit(payment('p-slow'))).rejects.toBeInstanceOf(
      ConnectorUnavailableError,
    );
    expect(stub.calls).toHaveLength(2);
    // Two attempts cut at 200 ms each, not left to the stub's 5 seconds.
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('retries an answer outside the contract, and never reads it as a refusal', async () => {
    stub.mode = 'garbage';
    await expect(rail().checkCustomerProfile(payment('p-garbage'))).rejects.toBeInstanceOf(
      ConnectorUnavailableError,
    );
    expect(stub.calls).toHaveLength(3);
  });

  it('recovers within one step when the connector answers again after a 503', async () => {
    stub.mode = 'error';
    const pending = rail({ backoffMs: 100 }).checkCustomerProfile(payment('p-flaky'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    stub.mode = 'normal';
    await expect(pending).resolves.toEqual({ accepted: true });
    expect(stub.calls.length).toBeGreaterThanOrEqual(2);
  });

  it('does not repeat a request the connector refuses (a wrong key): it is a fault, not a refusal', async () => {
    const outcome = rail({}, 'not-the-shared-key').submit(payment('p-wrong-key'));
    await expect(outcome).rejects.toBeInstanceOf(ConnectorProtocolError);
    expect(stub.calls).toHaveLength(1);
    expect(stub.submissions.has('p-wrong-key')).toBe(false);
  });

  it('starts no attempt that could not end before the deadline', async () => {
    stub.mode = 'slow';
    stub.slowMs = 1000;
    await expect(
      rail({ timeoutMs: 200, maxAttempts: 10, backoffMs: 100, deadlineMs: 350 }).submit(
        payment('p-deadline'),
      ),
    ).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(stub.calls).toHaveLength(1);
  });
});

describe('connector settings', () => {
  const withEnv = (env: Record<string, string | undefined>, run: () => void) => {
    const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
    Object.assign(process.env, env);
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete process.env[name];
    try {
      run();
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  };

  it('refuses plain http to anything but this machine', () => {
    withEnv({ CONNECTOR_URL: 'http://bank.example/connector' }, () => {
      expect(() => connectorSettings()).toThrow(/https/);
    });
    withEnv({ CONNECTOR_URL: 'http://127.0.0.1:9/connector' }, () => {
      expect(connectorSettings().baseUrl.href).toBe('http://127.0.0.1:9/connector/');
    });
  });

  it('needs a signing key: the local variable, or a Secrets Manager secret', () => {
    withEnv({ CONNECTOR_SECRET: undefined, CONNECTOR_SECRET_ARN: undefined }, () => {
      expect(() => connectorSigningKey()).toThrow(/CONNECTOR_SECRET_ARN/);
    });
  });
});

describe('connector request signature: fixed vectors from docs/connector-openapi.json', () => {
  // Computed outside the project from the contract's description (openssl dgst -sha256, then
  // -hmac over "timestamp\nmethod\npath\nbodyDigest"), so a signature that leaves a line out fails.
  const VECTOR = {
    key: 'connector-test-key',
    timestamp: 1767225600,
    path: '/payments/p-1/submission',
    body: '{"paymentId":"p-1","tenant":"t-1","clientId":"c-1","transfer":{"paymentMethod":"CreditTransfer","amount":"10.00","debtorAccountId":"acc-1"}}',
    bodySha256: 'd1240d19b0555ac61f6194b99162a74ccd4614af0339cc789c56d84480194be3',
    signature: 'v1=5b724fdeb3c1277f4d16aba385ab5c1350d56cfb7271169612aae4a1dd6005f4',
  };

  afterEach(() => {
    vi.useRealTimers();
  });

  it('a submission is sent signed over its body: amount and creditor cannot change unnoticed', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: VECTOR.timestamp * 1000 });
    const sent: { path: string; method: string; headers: Headers; body: string }[] = [];
    const fakeFetch = (async (url: URL, init: RequestInit) => {
      sent.push({
        path: url.pathname,
        method: String(init.method),
        headers: new Headers(init.headers),
        body: String(init.body),
      });
      return new Response('{"accepted":true}', { headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    const vectorRail = new ConnectorRail(
      settings({ baseUrl: new URL('https://connector.example/') }),
      async () => VECTOR.key,
      fakeFetch,
    );
    await vectorRail.submit({
      tenant: 't-1',
      paymentId: 'p-1',
      clientId: 'c-1',
      transfer: { paymentMethod: 'CreditTransfer', amount: '10.00', debtorAccountId: 'acc-1' },
    });
    const [request] = sent;
    expect(request?.method).toBe('PUT');
    expect(request?.path).toBe(VECTOR.path);
    expect(request?.body).toBe(VECTOR.body);
    expect(request?.headers.get('x-connector-timestamp')).toBe(String(VECTOR.timestamp));
    expect(request?.headers.get('x-connector-signature')).toBe(VECTOR.signature);
  });
});
