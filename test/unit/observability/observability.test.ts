import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InitiationDependencies } from '#domain/credit-transfers/initiate-credit-transfer';
import type { CreditTransferStore, StatusChangedEvent } from '#domain/credit-transfers/ports';
import type { JsonEvent } from '#shared/middleware';
import { fullCreditTransfer } from '../../fixtures/credit-transfers.ts';

/**
 * Log lines and metrics as they reach stdout. Powertools reads POWERTOOLS_METRICS_DISABLED when
 * a Metrics object is made, so the modules are loaded fresh with metrics switched on.
 */
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjbGllbnQtMSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
const ACCOUNT_NUMBER = 'GB29NWBK60161331926819';

let lines: string[] = [];
const logged = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
const emf = (name: string) =>
  logged().filter((line) =>
    (
      line._aws as { CloudWatchMetrics?: { Metrics: { Name: string }[] }[] } | undefined
    )?.CloudWatchMetrics?.some((directive) => directive.Metrics.some((metric) => metric.Name === name)),
  );

beforeEach(() => {
  vi.resetModules();
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  vi.stubEnv('POWERTOOLS_DEV', 'false');
  lines = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    for (const line of String(chunk).split('\n')) if (line.trim().startsWith('{')) lines.push(line);
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const context = { awsRequestId: 'request-1', functionName: 'test' } as Context;

const initiationEvent = (body: unknown): JsonEvent =>
  ({
    httpMethod: 'POST',
    path: '/v1/payments/credit-transfers',
    resource: '/v1/payments/credit-transfers',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: {
      requestId: 'api-request-1',
      path: '/v1/payments/credit-transfers',
      authorizer: { tenant: 'tenant-a', clientId: 'client-1', scope: 'transactions:write' },
    },
  }) as unknown as JsonEvent;

const fakeStore = (): CreditTransferStore =>
  ({
    create: async () => true,
    get: async () => undefined,
    getByIdempotencyKey: async () => undefined,
  }) as unknown as CreditTransferStore;

const initiationHandler = async () => {
  const { initiateCreditTransfer } = await import('#api/initiate-credit-transfer');
  const { jsonHttpHandler } = await import('#shared/http-handler');
  const dependencies = (): InitiationDependencies => ({
    store: fakeStore(),
    clock: { now: () => new Date() },
    workflow: { start: async () => undefined },
  });
  return jsonHttpHandler(initiateCreditTransfer(dependencies, () => 'http://127.0.0.1:3000'));
};

const transfer = () => {
  const body = structuredClone(fullCreditTransfer()) as Record<string, unknown> & {
    creditor: { account: { accountNumber?: string } };
  };
  body.creditor.account.accountNumber = ACCOUNT_NUMBER;
  return body;
};

describe('request log lines', () => {
  it('carry request id, tenant, client id and paymentId, and neither the token nor the account number', async () => {
    const handler = await initiationHandler();
    const response = await handler(initiationEvent(transfer()), context);
    expect(response.statusCode).toBe(202);
    const { paymentId } = JSON.parse(response.body) as { paymentId: string };

    const requestLine = logged().find((line) => line.message === 'Request handled');
    expect(requestLine).toMatchObject({
      requestId: 'api-request-1',
      function_request_id: 'request-1',
      tenant: 'tenant-a',
      clientId: 'client-1',
      paymentId,
      statusCode: 202,
    });
    const all = lines.join('\n');
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(TOKEN.split('.')[2]);
    expect(all).not.toContain(ACCOUNT_NUMBER);
  });

  it('redact a token and mask an account number whatever a caller hands the logger', async () => {
    const { logger } = await import('#shared/logger');
    logger.info('Careless', {
      headers: { Authorization: `Bearer ${TOKEN}` },
      creditorAccountNumber: ACCOUNT_NUMBER,
    });
    const line = logged().find((entry) => entry.message === 'Careless');
    expect(line).toMatchObject({
      headers: { Authorization: '[redacted]' },
      creditorAccountNumber: `${'*'.repeat(ACCOUNT_NUMBER.length - 4)}6819`,
    });
    expect(lines.join('\n')).not.toContain(TOKEN);
  });
});

describe('business metrics (namespace CreditTransfers)', () => {
  it('emits TransfersInitiated for an accepted initiation', async () => {
    const handler = await initiationHandler();
    await handler(initiationEvent(transfer()), context);
    const [line] = emf('TransfersInitiated');
    expect(line).toMatchObject({ TransfersInitiated: 1, service: 'credit-transfers' });
    expect(
      (line?._aws as { CloudWatchMetrics?: { Namespace: string }[] } | undefined)?.CloudWatchMetrics?.[0]
        ?.Namespace,
    ).toBe('CreditTransfers');
  });

  it('emits no TransfersInitiated for a refused initiation', async () => {
    const handler = await initiationHandler();
    const response = await handler(initiationEvent({ amount: '-1' }), context);
    expect(response.statusCode).toBe(400);
    expect(emf('TransfersInitiated')).toEqual([]);
  });

  it('emits TransfersRejected with its reason and TransfersCancelled as status events go out', async () => {
    const { countingStatusEvents, flushMetrics } = await import('#shared/metrics');
    const published: StatusChangedEvent[] = [];
    const publisher = countingStatusEvents({ publish: async (events) => void published.push(...events) });
    const event = (status: StatusChangedEvent['status'], statusReason?: string): StatusChangedEvent => ({
      eventId: `${status}-id`,
      tenant: 'tenant-a',
      paymentId: `${status}-payment`,
      sequence: 1,
      status,
      ...(statusReason !== undefined && { statusReason }),
      date: new Date().toISOString(),
      actor: 'rail',
    });
    await publisher.publish([
      event('Rejected', 'InvalidFileFormat'),
      event('Cancelled', 'RequestedByCustomer'),
    ]);
    flushMetrics();
    expect(published).toHaveLength(2);
    expect(emf('TransfersRejected')).toEqual([
      expect.objectContaining({ TransfersRejected: 1, reason: 'InvalidFileFormat' }),
    ]);
    expect(emf('TransfersCancelled')).toEqual([expect.objectContaining({ TransfersCancelled: 1 })]);
  });

  it('emits TransfersStuck with the count of non-final transfers past their due time', async () => {
    const { reconcile } = await import('#workflow/reconcile');
    const now = new Date('2026-06-01T12:00:00Z');
    const records = new Map([
      [
        'late',
        {
          tenant: 't',
          paymentId: 'late',
          status: 'AcceptedTechnicalValidation',
          history: [{}],
          publishedCount: 1,
        },
      ],
      ['done', { tenant: 't', paymentId: 'done', status: 'Rejected', history: [{}], publishedCount: 1 }],
    ]);
    const store = {
      due: async () => [
        { tenant: 't', paymentId: 'late', dueAt: '2026-06-01T11:00:00Z' },
        { tenant: 't', paymentId: 'done', dueAt: '2026-06-01T11:00:00Z' },
      ],
      get: async (_tenant: string, paymentId: string) => records.get(paymentId),
      markPublished: async () => undefined,
      claim: async () => 1,
      defer: async () => true,
      countParked: async () => 0,
    };
    const run = reconcile(
      () =>
        ({
          store,
          // Answers the reconciler's probe: the rail is there.
          rail: { clearingStatus: async () => ({ state: 'unknown' }) },
          clock: { now: () => now },
          settings: {
            pollInitialSeconds: 1,
            pollMaxIntervalSeconds: 60,
            pollMaxAttempts: 8,
            maxHoldSeconds: 60,
          },
          workflow: { start: async () => undefined },
        }) as never,
    );
    const report = await run({});
    expect(report.stuck).toBe(1);
    expect(emf('TransfersStuck')).toEqual([expect.objectContaining({ TransfersStuck: 1 })]);
  });
});
