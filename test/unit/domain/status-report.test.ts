import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { ApiDependencies } from '#api/dependencies';
import { getCreditTransferStatus } from '#api/get-credit-transfer-status';
import type { CreditTransferStatus } from '#domain/credit-transfers/credit-transfer';
import { matchesIfNoneMatch } from '#domain/credit-transfers/get-credit-transfer-status';
import type { CreditTransferRecord, CreditTransferStore } from '#domain/credit-transfers/ports';
import { httpHandler } from '#shared/http-handler';
import { minimalCreditTransfer } from '../../fixtures/credit-transfers.ts';

const record = (status: CreditTransferStatus, statusDate: string): CreditTransferRecord =>
  ({
    tenant: 'acme',
    paymentId: 'p-1',
    clientId: 'acme-client',
    transfer: minimalCreditTransfer(),
    status,
    statusDate,
    history: [],
  }) as unknown as CreditTransferRecord;

/** One stored transfer of tenant acme, whose state the test changes. */
const storeWith = (initial: CreditTransferRecord) => {
  let current = initial;
  const store = {
    get: async (tenant: string, paymentId: string) =>
      tenant === current.tenant && paymentId === current.paymentId ? structuredClone(current) : undefined,
  } as unknown as CreditTransferStore;
  return {
    dependencies: () => ({ store }) as unknown as ApiDependencies,
    set: (next: CreditTransferRecord) => {
      current = next;
    },
  };
};

const request = (tenant: string, headers: Record<string, string> = {}): APIGatewayProxyEvent =>
  ({
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    // As API Gateway hands the status route over: its method and resource name the route.
    httpMethod: 'GET',
    resource: '/v1/payments/credit-transfers/{paymentId}/status',
    pathParameters: { paymentId: 'p-1' },
    requestContext: { authorizer: { tenant, clientId: `${tenant}-client`, scope: 'transactions:read' } },
  }) as unknown as APIGatewayProxyEvent;

describe('the status report', () => {
  const received = record('Received', '2026-11-23T10:00:00.000Z');

  it('answers 200 with a strong ETag, private no-cache, and a Retry-After while not final', async () => {
    const { dependencies } = storeWith(received);
    const reply = await getCreditTransferStatus(dependencies)(request('acme'));
    expect(reply.statusCode).toBe(200);
    expect(reply.headers?.ETag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(reply.headers?.['Cache-Control']).toBe('private, no-cache');
    expect(Number(reply.headers?.['Retry-After'])).toBeGreaterThan(0);
    expect(JSON.parse(reply.body)).toMatchObject({ paymentId: 'p-1', status: 'Received' });
  });

  it('answers 304 with no body and the same tag to If-None-Match of the current tag, a list, or *', async () => {
    const { dependencies } = storeWith(received);
    const handler = getCreditTransferStatus(dependencies);
    const etag = (await handler(request('acme'))).headers?.ETag as string;
    for (const ifNoneMatch of [etag, `"stale", ${etag}`, `W/${etag}`, '*']) {
      const reply = await handler(request('acme', { 'If-None-Match': ifNoneMatch }));
      expect(reply.statusCode, ifNoneMatch).toBe(304);
      expect(reply.body).toBe('');
      expect(reply.headers?.ETag).toBe(etag);
      expect(reply.headers?.['Cache-Control']).toBe('private, no-cache');
    }
    expect((await handler(request('acme', { 'If-None-Match': '"other"' }))).statusCode).toBe(200);
  });

  it('changes the tag with every status change, and drops Retry-After once final', async () => {
    const { dependencies, set } = storeWith(received);
    const handler = getCreditTransferStatus(dependencies);
    const tags = new Set<string>();
    for (const [status, date] of [
      ['Received', '2026-11-23T10:00:00.000Z'],
      ['AcceptedTechnicalValidation', '2026-11-23T10:00:01.000Z'],
      ['AcceptedCustomerProfile', '2026-11-23T10:00:02.000Z'],
      ['AcceptedSettlementInProcess', '2026-11-23T10:00:03.000Z'],
      ['AcceptedSettlementCompleted', '2026-11-23T10:00:04.000Z'],
    ] as const) {
      const before = [...tags].join(', ');
      set(record(status, date));
      const reply = await handler(request('acme', before === '' ? {} : { 'If-None-Match': before }));
      expect(reply.statusCode, status).toBe(200);
      tags.add(reply.headers?.ETag as string);
      expect(reply.headers?.['Retry-After'] === undefined, status).toBe(
        status === 'AcceptedSettlementCompleted',
      );
    }
    expect(tags.size).toBe(5);
  });

  it("answers another tenant's paymentId 404 whatever tag it sends", async () => {
    const { dependencies } = storeWith(received);
    // With the middleware that turns errors into answers, as the function runs.
    const handler = httpHandler(getCreditTransferStatus(dependencies));
    const call = (event: APIGatewayProxyEvent) => handler(event, {} as Context);
    const etag = (await call(request('acme'))).headers?.ETag as string;
    for (const ifNoneMatch of [etag, '*']) {
      const reply = await call(request('intruder', { 'If-None-Match': ifNoneMatch }));
      expect(reply.statusCode).toBe(404);
      expect(reply.headers?.ETag).toBeUndefined();
    }
  });
});

describe('If-None-Match', () => {
  it.each([
    ['"a"', '"a"', true],
    ['W/"a"', '"a"', true],
    ['"b", "a"', '"a"', true],
    [' * ', '"a"', true],
    ['"b"', '"a"', false],
    ['a', '"a"', false],
    ['"ab"', '"a"', false],
  ])('%s against %s matches: %s', (header, etag, expected) => {
    expect(matchesIfNoneMatch(header, etag)).toBe(expected);
  });
});
