import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { creditTransferKey } from '#adapters/table/keys';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { expectValidPain002 } from '../support/iso20022-schemas.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually } from './support/webhook-receiver.ts';

const service = useLocalService();

const BATCHES = '/v1/payments/credit-transfer-batches';
const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

interface Client {
  clientId: string;
  token: string;
}

const clientOf = async (tenant: string, scope: string): Promise<Client> => {
  const clientId = `batch-approvals-${randomUUID()}`;
  const clientSecret = `${clientId}-secret`;
  await createClient(service, { clientId, clientSecret, scope, tenant });
  return { clientId, token: await requestToken(service.baseUrl, undefined, { clientId, clientSecret }) };
};

/** A tenant of its own with one rule: EUR from `minimumAmount` up waits for one approval. */
const tenantWith = async (minimumAmount: string) => {
  const tenant = `batch-approvals-${randomUUID().slice(0, 8)}`;
  const [initiator, approver, admin] = await Promise.all([
    // The initiator may approve too, and is still refused.
    clientOf(tenant, 'transactions:read transactions:write transactions:approve'),
    clientOf(tenant, 'transactions:read transactions:approve'),
    clientOf(tenant, 'payment-controls:manage'),
  ]);
  const stored = await callApi(service.baseUrl, '/v1/payment-controls', {
    method: 'PUT',
    token: admin.token,
    body: {
      approvalRules: [{ name: 'large EUR', currency: 'EUR', minimumAmount, approvalsRequired: 1 }],
    },
  });
  expect(stored.status, JSON.stringify(stored.body)).toBe(200);
  return { tenant, initiator, approver };
};

const decideBatch = (as: Client, batchId: string, decision: 'approve' | 'reject', key: string) =>
  callApi(service.baseUrl, `${BATCHES}/${batchId}/approvals`, {
    token: as.token,
    body: { decision, reason: 'payroll checked' },
    headers: { 'Idempotency-Key': key },
  });

const batchOf = async (as: Client, batchId: string) => {
  const reply = await callApi(service.baseUrl, `${BATCHES}/${batchId}`, { token: as.token });
  expect(reply.status).toBe(200);
  return reply.body as {
    status: string;
    creditTransfers: { paymentId: string; status: string; statusReasonCode?: string }[];
  };
};

const statusesOf = async (as: Client, batchId: string) =>
  (await batchOf(as, batchId)).creditTransfers.map((transfer) => transfer.status);

const pain002Of = async (as: Client, batchId: string): Promise<string> => {
  const reply = await callApi(service.baseUrl, `${BATCHES}/${batchId}`, {
    token: as.token,
    headers: { Accept: 'application/xml' },
  });
  expect(reply.status).toBe(200);
  await expectValidPain002(reply.body);
  return String(reply.body);
};

const untilCompleted = (as: Client, batchId: string) =>
  eventually(
    async () => {
      const batch = await batchOf(as, batchId);
      return batch.status === 'Completed' ? batch : undefined;
    },
    `batch ${batchId} Completed`,
    90_000,
  );

/** The statuses a transfer went through, from its item. */
const historyOf = async (tenant: string, paymentId: string) => {
  const item = await service.table.get({
    TableName: 'credit-transfers',
    Key: creditTransferKey(tenant, paymentId),
  });
  return ((item.Item?.history ?? []) as { status: string }[]).map((change) => change.status);
};

/** How many changes of a transfer's history are published as status events. */
const publishedCountOf = async (tenant: string, paymentId: string) => {
  const item = await service.table.get({
    TableName: 'credit-transfers',
    Key: creditTransferKey(tenant, paymentId),
  });
  return item.Item?.publishedCount as number | undefined;
};

/** The workflow executions of a transfer the local runtime ran so far (its execution history). */
const executionsOf = async (paymentId: string) =>
  (await readFile(join(service.dataDir, 'executions.jsonl'), 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { paymentId: string; trigger: string })
    .filter((execution) => execution.paymentId === paymentId);

describe('batches under approval rules', () => {
  it('holds the JSON batch transfers a rule meets until a second client approves them all in one call', async () => {
    const { tenant, initiator, approver } = await tenantWith('1000.00');
    const amounts = ['500.00', '1500.00', '2500.00', '800.00'];
    const submitted = await callApi(service.baseUrl, BATCHES, {
      token: initiator.token,
      body: { creditTransfers: amounts.map((amount) => minimalCreditTransfer({ amount, currency: 'EUR' })) },
      headers: { 'Idempotency-Key': randomUUID() },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const { batchId } = submitted.body;
    const paymentIds = (submitted.body.creditTransfers as { paymentId: string }[]).map((t) => t.paymentId);
    const held = [paymentIds[1], paymentIds[2]] as string[];

    // The others run their course; the held ones wait, no lifecycle started for them.
    await eventually(
      async () => {
        const statuses = await statusesOf(initiator, batchId);
        return statuses[0] === 'AcceptedSettlementCompleted' && statuses[3] === 'AcceptedSettlementCompleted'
          ? statuses
          : undefined;
      },
      'the transfers no rule holds settled',
      60_000,
    );
    expect(await statusesOf(initiator, batchId)).toEqual([
      'AcceptedSettlementCompleted',
      'Pending',
      'Pending',
      'AcceptedSettlementCompleted',
    ]);
    // A held transfer waits with no workflow execution: its change to Pending is published all the same.
    for (const paymentId of held) {
      await eventually(
        async () => ((await publishedCountOf(tenant, paymentId)) === 1 ? true : undefined),
        `${paymentId}'s change to Pending published`,
        30_000,
      );
      expect(await executionsOf(paymentId)).toEqual([]);
      expect(await historyOf(tenant, paymentId)).toEqual(['Pending']);
    }
    await eventually(
      async () => ((await executionsOf(paymentIds[0] as string)).length > 0 ? true : undefined),
      'the unheld transfer’s execution noted',
      30_000,
    );
    const status = await callApi(service.baseUrl, `${TRANSFERS}/${held[0]}/status`, {
      token: initiator.token,
    });
    expect(status.body.approval).toMatchObject({ rule: 'large EUR', approvalsRequired: 1, approvals: [] });
    const report = await pain002Of(initiator, batchId);
    expect(report).toContain('<GrpSts>ACCP</GrpSts>');
    expect(report.match(/<TxSts>PDNG<\/TxSts>/g)).toHaveLength(2);
    expect((await batchOf(initiator, batchId)).status).toBe('Accepted');

    // The client that submitted the batch is refused whole, though it holds transactions:approve.
    const own = await decideBatch(initiator, batchId, 'approve', randomUUID());
    expect(own.status).toBe(403);
    expect(own.body.error_description).toContain('submitted the batch');
    expect(await statusesOf(initiator, batchId)).toContain('Pending');

    // Another tenant's approver finds no such batch.
    const stranger = await clientOf(`batch-approvals-${randomUUID().slice(0, 8)}`, 'transactions:approve');
    expect((await decideBatch(stranger, batchId, 'approve', randomUUID())).status).toBe(404);

    const key = randomUUID();
    const approved = await decideBatch(approver, batchId, 'approve', key);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toEqual({ batchId, decision: 'approve', decided: 2, notDecided: [] });
    // Repeated with its key: the same counts, nothing decided twice.
    expect((await decideBatch(approver, batchId, 'approve', key)).body).toEqual(approved.body);
    // The same decision under its key but another body: refused.
    expect((await decideBatch(approver, batchId, 'reject', key)).status).toBe(422);
    // A second call by the same client: each held transfer listed as decided by it already.
    const again = await decideBatch(approver, batchId, 'approve', randomUUID());
    expect(again.status).toBe(200);
    expect(again.body.decided).toBe(0);
    expect(again.body.notDecided).toEqual(
      held.map((paymentId) => expect.objectContaining({ paymentId, reason: 'approval_already_decided' })),
    );

    const completed = await untilCompleted(initiator, batchId);
    expect(completed.creditTransfers.map((transfer) => transfer.status)).toEqual(
      Array(4).fill('AcceptedSettlementCompleted'),
    );
    // Each held transfer moved on once, by its approval, which started its first execution; the others never waited.
    for (const paymentId of held) {
      // The runner notes an execution once it ends, a moment after its transfer is final.
      const [first] = await eventually(
        async () => {
          const executions = await executionsOf(paymentId);
          return executions.length > 0 ? executions : undefined;
        },
        `${paymentId} execution noted`,
        30_000,
      );
      expect(first?.trigger).toBe('initiation');
      const history = await historyOf(tenant, paymentId);
      expect(history.slice(0, 2)).toEqual(['Pending', 'Received']);
      expect(history.filter((status) => status === 'Received')).toHaveLength(1);
    }
    expect((await historyOf(tenant, paymentIds[0] as string))[0]).toBe('Received');
    expect((await pain002Of(initiator, batchId)).match(/<GrpSts>ACSC<\/GrpSts>/g)).toHaveLength(1);
  }, 180_000);

  it('holds a pain.001’s transfers over the threshold and ends them Rejected on a batch rejection; the batch completes', async () => {
    const { tenant, initiator, approver } = await tenantWith('2000.00');
    // The example's three transfers: 3150.25 and 2250.50 EUR are held, 750.00 EUR runs (and is
    // refused by the sandbox: its debtor account ends in -nofunds).
    const xml = (await readFile('examples/pain.001.001.09.xml', 'utf8'))
      .replaceAll('2026-12-01', new Date().toISOString().slice(0, 10))
      .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>APPROVALS-${randomUUID().slice(0, 8)}</MsgId>`);
    const submitted = await callApi(service.baseUrl, BATCHES, {
      token: initiator.token,
      rawBody: xml,
      headers: { 'Content-Type': 'application/xml' },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const { batchId } = submitted.body;
    await eventually(
      async () => {
        const statuses = await statusesOf(initiator, batchId);
        return statuses[2] === 'Rejected' ? true : undefined;
      },
      'the transfer under the threshold ended',
      60_000,
    );
    expect(await statusesOf(initiator, batchId)).toEqual(['Pending', 'Pending', 'Rejected']);
    expect((await pain002Of(initiator, batchId)).match(/<TxSts>PDNG<\/TxSts>/g)).toHaveLength(2);

    const rejected = await decideBatch(approver, batchId, 'reject', randomUUID());
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body).toMatchObject({ decision: 'reject', decided: 2, notDecided: [] });

    const completed = await untilCompleted(initiator, batchId);
    expect(completed.creditTransfers.map((transfer) => [transfer.status, transfer.statusReasonCode])).toEqual(
      [
        ['Rejected', 'DS02'],
        ['Rejected', 'DS02'],
        ['Rejected', 'AM04'],
      ],
    );
    expect(completed.creditTransfers.every((transfer) => FINAL.has(transfer.status))).toBe(true);
    expect(await pain002Of(initiator, batchId)).toContain('<GrpSts>RJCT</GrpSts>');
    // Decided: a late approval by another client lists each as no longer pending.
    const third = await clientOf(tenant, 'transactions:approve');
    const late = await decideBatch(third, batchId, 'approve', randomUUID());
    expect(late.body).toMatchObject({ decided: 0 });
    expect(late.body.notDecided.map((entry: { reason: string }) => entry.reason)).toEqual([
      'payment_not_pending',
      'payment_not_pending',
    ]);
  }, 180_000);
});
