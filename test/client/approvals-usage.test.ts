import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, CreditTransfersClient } from '../../client/src/index.ts';

/**
 * The SDK's calls of the usage and batch approval routes, which the service does not serve yet,
 * against a real HTTP server in this test answering the shapes they are specified with.
 */

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const seen: Seen[] = [];
/** Answers for the API routes, in order; the last one repeats. */
let answers: ((response: ServerResponse) => void)[] = [];

const json = (status: number, body: unknown) => (response: ServerResponse) => {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
};

const server = createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString();
  if (request.url === '/oauth/token') {
    json(200, { access_token: 'token-1', token_type: 'Bearer', expires_in: 3600 })(response);
    return;
  }
  seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
  const answer = answers.length > 1 ? answers.shift() : answers[0];
  answer?.(response);
});

let baseUrl: string;
const sdk = () =>
  new CreditTransfersClient({
    baseUrl,
    clientId: 'approver',
    clientSecret: 'approver-secret',
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  });

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  await once(server, 'close');
});

beforeEach(() => {
  seen.length = 0;
  answers = [];
});

const USAGE = {
  limits: [
    {
      debtorAccountId: 'DE89370400440532013000',
      currency: 'EUR',
      period: 'day',
      maxAmount: '50000.00',
      maxCount: 100,
      onBreach: 'reject',
      periodStart: '2026-12-08T00:00:00.000Z',
      periodEnd: '2026-12-09T00:00:00.000Z',
      usedAmount: '1250.00',
      usedCount: 3,
      remainingAmount: '48750.00',
      remainingCount: 97,
    },
  ],
};

describe('paymentControls.usage', () => {
  it('asks for one account and currency and answers each limit with its usage', async () => {
    answers = [json(200, USAGE)];
    const usage = await sdk().paymentControls.usage({
      debtorAccountId: 'DE89370400440532013000',
      currency: 'EUR',
    });
    expect(usage).toEqual(USAGE);
    expect(seen).toHaveLength(1);
    const url = new URL(seen[0]?.url ?? '', baseUrl);
    expect([seen[0]?.method, url.pathname]).toEqual(['GET', '/v1/payment-controls/usage']);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      debtorAccountId: 'DE89370400440532013000',
      currency: 'EUR',
    });
    expect(seen[0]?.headers.authorization).toBe('Bearer token-1');
  });

  it("throws the service's refusal as ApiError", async () => {
    answers = [
      json(400, {
        error: 'invalid_request',
        error_description: 'The request is not valid: currency is required',
        invalidParams: [{ name: 'currency', reason: 'is required' }],
      }),
    ];
    const error = await sdk()
      .paymentControls.usage({ debtorAccountId: 'DE89370400440532013000', currency: '' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, error: 'invalid_request' });
  });
});

describe('approveBatch', () => {
  const RESULT = {
    batchId: 'b-1',
    decision: 'approve',
    decided: 2,
    notDecided: [{ paymentId: 'p-3', reason: 'already decided by this client' }],
  };

  it('sends the decision and reason with an idempotency key, and answers the counts', async () => {
    answers = [json(200, RESULT)];
    const result = await sdk().approveBatch('b-1', { decision: 'approve', reason: 'payroll checked' });
    expect(result).toEqual(RESULT);
    expect(seen).toHaveLength(1);
    expect([seen[0]?.method, seen[0]?.url]).toEqual([
      'POST',
      '/v1/payments/credit-transfer-batches/b-1/approvals',
    ]);
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ decision: 'approve', reason: 'payroll checked' });
    expect(seen[0]?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a retry after a 503 sends the same idempotency key, so the batch is decided once', async () => {
    answers = [
      json(503, { error: 'service_unavailable', error_description: 'try again' }),
      json(200, RESULT),
    ];
    const result = await sdk().approveBatch('b-1', { decision: 'reject' });
    expect(result.decided).toBe(2);
    expect(seen).toHaveLength(2);
    const keys = seen.map((request) => request.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ decision: 'reject' });
  });

  it("sends the caller's idempotency key", async () => {
    answers = [json(200, RESULT)];
    await sdk().approveBatch('b-1', { decision: 'approve', idempotencyKey: 'payroll-2026-12-approve' });
    expect(seen[0]?.headers['idempotency-key']).toBe('payroll-2026-12-approve');
  });
});

describe('single decisions and controls over a flaky connection', () => {
  it('approve retries after a 503 with the same idempotency key', async () => {
    const transfer = { paymentId: 'p-1', status: 'Pending', date: '2026-12-08T00:00:00.000Z' };
    answers = [
      json(503, { error: 'service_unavailable', error_description: 'try again' }),
      json(200, transfer),
    ];
    const answer = await sdk().approve('p-1', { reason: 'invoice 4711' });
    expect(answer.paymentId).toBe('p-1');
    const keys = seen.map((request) => request.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ decision: 'approve', reason: 'invoice 4711' });
  });

  it('a change of the controls is not sent again after a 503: a repeat would be refused 412 though stored', async () => {
    answers = [json(503, { error: 'service_unavailable', error_description: 'try again' })];
    const error = await sdk()
      .paymentControls.put({ approvalRules: [] }, { ifMatch: '"1"' })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers['if-match']).toBe('"1"');
  });
});
