import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { expectValidPain002 } from '../support/iso20022-schemas.ts';
import { callApi } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually, WebhookReceiver } from './support/webhook-receiver.ts';

const BATCHES = '/v1/payments/credit-transfer-batches';
const TRANSFERS = '/v1/payments/credit-transfers';
const COMPLETED = 'credit-transfer-batch.completed';

const service = useLocalService({ token: 'transactions:read transactions:write webhooks:manage' });
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  const endpoint = await callApi(service.baseUrl, '/v1/webhook-endpoints', {
    token: service.token,
    body: { url: receiver.url('/batches'), eventTypes: [COMPLETED] },
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
});

afterAll(async () => {
  await receiver?.stop();
});

const today = () => new Date().toISOString().slice(0, 10);

const submitJson = async (debtors: readonly string[]) => {
  const reply = await callApi(service.baseUrl, BATCHES, {
    token: service.token,
    body: { creditTransfers: debtors.map((debtorAccountId) => minimalCreditTransfer({ debtorAccountId })) },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(202);
  return reply.body as { batchId: string; creditTransfers: { paymentId: string }[] };
};

const getBatch = (batchId: string, headers: Record<string, string> = {}) =>
  callApi(service.baseUrl, `${BATCHES}/${batchId}`, { token: service.token, headers });

const untilCompleted = (batchId: string) =>
  eventually(
    async () => {
      const reply = await getBatch(batchId);
      return reply.body.status === 'Completed' ? reply.body : undefined;
    },
    `batch ${batchId} completed`,
    60_000,
  );

const pain002Of = async (batchId: string) => {
  const report = await getBatch(batchId, { Accept: 'application/xml' });
  expect(report.status).toBe(200);
  await expectValidPain002(report.body);
  return String(report.body);
};

/** The batch's completion events in the events API (this file's service makes only a few). */
const completionEventsOf = async (batchId: string) => {
  const reply = await callApi(service.baseUrl, `/v1/events?type=${COMPLETED}&limit=100`, {
    token: service.token,
  });
  expect(reply.status).toBe(200);
  return (reply.body as { id: string; data: Record<string, unknown> }[]).filter(
    (event) => event.data.batchId === batchId,
  );
};

describe('batch outcome', () => {
  it('a pain.001 with a refused transfer completes PART: counts by status and reason, GrpSts and each PmtInfSts, one event and one webhook', async () => {
    const xml = (await readFile('examples/pain.001.001.09.xml', 'utf8'))
      .replaceAll('2026-12-01', today())
      .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>OUTCOME-${Date.now()}</MsgId>`);
    const accepted = await callApi(service.baseUrl, BATCHES, {
      token: service.token,
      rawBody: xml,
      headers: { 'Content-Type': 'application/xml' },
    });
    expect(accepted.status).toBe(202);
    const { batchId } = accepted.body as { batchId: string };

    const batch = await untilCompleted(batchId);
    expect(batch).toMatchObject({
      status: 'Completed',
      groupStatus: 'PART',
      open: 0,
      countsByStatus: { AcceptedSettlementCompleted: 2, Rejected: 1 },
      countsByReasonCode: { AM04: 1 },
    });
    expect(Date.parse(batch.completedAt)).not.toBeNaN();

    const report = await pain002Of(batchId);
    expect(report).toContain('<GrpSts>PART</GrpSts>');
    expect(report).toContain('<OrgnlPmtInfId>SALARIES-DEC</OrgnlPmtInfId><PmtInfSts>ACSC</PmtInfSts>');
    expect(report).toContain('<OrgnlPmtInfId>SUPPLIERS-DEC</OrgnlPmtInfId><PmtInfSts>RJCT</PmtInfSts>');

    const events = await eventually(async () => {
      const found = await completionEventsOf(batchId);
      return found.length > 0 ? found : undefined;
    }, `the completion event of ${batchId}`);
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toEqual({
      batchId,
      messageId: expect.stringMatching(/^OUTCOME-/),
      count: 3,
      groupStatus: 'PART',
      countsByStatus: { AcceptedSettlementCompleted: 2, Rejected: 1 },
      countsByReasonCode: { AM04: 1 },
      completedAt: batch.completedAt,
    });
    const delivered = await eventually(() => {
      const found = receiver.at('/batches').filter((entry) => entry.event?.data?.batchId === batchId);
      return found.length > 0 ? found : undefined;
    }, `the completion webhook of ${batchId}`);
    expect(new Set(delivered.map((entry) => entry.headers['webhook-id']))).toEqual(new Set([events[0]?.id]));
    expect(delivered[0]?.event.type).toBe(COMPLETED);
  });

  it('a batch whose transfers all settle completes ACSC', async () => {
    const { batchId } = await submitJson(['001-DDA-01-100001', '001-DDA-01-100002']);
    const batch = await untilCompleted(batchId);
    expect(batch).toMatchObject({
      groupStatus: 'ACSC',
      countsByStatus: { AcceptedSettlementCompleted: 2 },
      countsByReasonCode: {},
    });
    const report = await pain002Of(batchId);
    expect(report).toContain('<GrpSts>ACSC</GrpSts>');
    expect(report).toContain('<PmtInfSts>ACSC</PmtInfSts>');
  });

  it('a batch whose transfers are all refused completes RJCT', async () => {
    const { batchId } = await submitJson(['001-DDA-01-blocked', '001-DDA-01-nofunds']);
    const batch = await untilCompleted(batchId);
    expect(batch).toMatchObject({
      groupStatus: 'RJCT',
      countsByStatus: { Rejected: 2 },
      countsByReasonCode: { AC06: 1, AM04: 1 },
    });
    expect(await pain002Of(batchId)).toContain('<GrpSts>RJCT</GrpSts>');
  });

  it('stays Accepted (ACCP) while a transfer is open; a cancellation then completes it PART', async () => {
    const { batchId, creditTransfers } = await submitJson(['001-DDA-01-100003', '001-DDA-01-hold']);
    const [settling, held] = creditTransfers.map((transfer) => transfer.paymentId);
    // Counted once its final status is published, a moment after the status itself.
    const open = await eventually(async () => {
      const reply = await getBatch(batchId);
      return reply.body.countsByStatus?.AcceptedSettlementCompleted === 1 ? reply.body : undefined;
    }, `${settling} counted toward its batch`);
    expect(open).toMatchObject({ status: 'Accepted', groupStatus: 'ACCP', open: 1 });
    expect(open.completedAt).toBeUndefined();
    const report = await pain002Of(batchId);
    expect(report).toContain('<GrpSts>ACCP</GrpSts>');
    expect(await completionEventsOf(batchId)).toEqual([]);

    const cancelled = await callApi(service.baseUrl, `${TRANSFERS}/${held}/cancellation`, {
      token: service.token,
      body: {},
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(202);
    const batch = await untilCompleted(batchId);
    expect(batch).toMatchObject({
      groupStatus: 'PART',
      countsByStatus: { AcceptedSettlementCompleted: 1, Cancelled: 1 },
      countsByReasonCode: { CUST: 1 },
    });
    expect(await pain002Of(batchId)).toContain('<GrpSts>PART</GrpSts>');
  });
});
