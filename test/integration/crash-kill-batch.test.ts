import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { creditTransferKey } from '#adapters/table/keys';
import { derivedPaymentId } from '#domain/credit-transfers/payment-id';
import { batchPaymentId } from '#domain/iso20022/submit-batch';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, type JsonReply } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const BATCHES = '/v1/payments/credit-transfer-batches';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);
// Large enough that the kill lands while it is being stored; small enough to settle in a few minutes.
const COUNT = 600;
const TENANT = 'local';
const KEY = 'kill-mid-batch';

const service = useLocalService({ token: 'transactions:read transactions:write' });

const body = {
  creditTransfers: Array.from({ length: COUNT }, (_, index) =>
    minimalCreditTransfer({ amount: `${index + 1}.00` }),
  ),
};
const submit = () =>
  callApi(service.baseUrl, BATCHES, { token: service.token, body, headers: { idempotencyId: KEY } });

/** The ids the batch's transfers get: derived from the idempotency key and each position. */
const batchId = derivedPaymentId(TENANT, 'batch', KEY);
const paymentIds = Array.from({ length: COUNT }, (_, index) => batchPaymentId(TENANT, batchId, index));

const isStored = async (paymentId: string) =>
  (
    await service.table.get({
      TableName: 'credit-transfers',
      Key: creditTransferKey(TENANT, paymentId),
      ConsistentRead: true,
    })
  ).Item?.transfer !== undefined;

/** Every transfer item of the tenant, with its history. */
const storedTransfers = async () => {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await service.table.scan({
      TableName: 'credit-transfers',
      FilterExpression: '#type = :transfer',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':transfer': 'CreditTransfer' },
      ...(start !== undefined && { ExclusiveStartKey: start }),
    });
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items as { paymentId: string; status: string; history: { status: string }[] }[];
};

it('keeps a batch through a SIGKILL while it is being stored: the repeat answers the same batch, every transfer stored once and final once', async () => {
  // Sent, and cut off by the kill once some of its transfers are stored: never answered.
  const first = submit().catch(() => undefined);
  const early = paymentIds[20] as string;
  const late = paymentIds[COUNT - 1] as string;
  for (let polls = 0; !(await isStored(early)); polls++) {
    expect(polls, 'the batch is stored within two minutes').toBeLessThan(1200);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await service.kill();
  const killed: JsonReply | undefined = await first;
  expect(killed).toBeUndefined();

  await service.startAgain();
  // Part of the batch was stored, not all of it.
  const stored = await storedTransfers();
  expect(stored.length).toBeGreaterThan(20);
  expect(stored.length).toBeLessThan(COUNT);
  expect(await isStored(late)).toBe(false);
  const partial = await callApi(service.baseUrl, `${BATCHES}/${batchId}`, { token: service.token });
  expect(partial.body.status).toBe('Incomplete');

  // The same request again finishes it: the same batch, the same paymentIds.
  // A 503 (the service ran out of time while the restarted runtime catches up) is retried, as a
  // client does, with the same key: each attempt carries on where the last one stopped.
  let repeat = await submit();
  for (let attempt = 1; repeat.status === 503 && attempt < 10; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    repeat = await submit();
  }
  expect(repeat.status, JSON.stringify(repeat.body)).toBe(202);
  expect(repeat.headers.get('idempotent-replayed')).toBe('true');
  expect(repeat.body.batchId).toBe(batchId);
  expect((repeat.body.creditTransfers as { paymentId: string }[]).map((item) => item.paymentId)).toEqual(
    paymentIds,
  );

  // Every transfer reaches a final status.
  const deadline = Date.now() + 840_000;
  let transfers = await storedTransfers();
  while (transfers.some((transfer) => !FINAL.has(transfer.status)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    transfers = await storedTransfers();
  }
  // Stored once each: exactly the batch's paymentIds, no other transfer.
  expect(transfers.map((transfer) => transfer.paymentId).sort()).toEqual([...paymentIds].sort());
  const notFinal = transfers.filter((transfer) => !FINAL.has(transfer.status));
  expect(notFinal.map((transfer) => `${transfer.paymentId} ${transfer.status}`)).toEqual([]);
  // Final once, and no step twice: every status of a transfer's history appears once.
  const repeated = transfers.filter((transfer) => {
    const statuses = transfer.history.map((entry) => entry.status);
    return new Set(statuses).size !== statuses.length;
  });
  expect(repeated.map((transfer) => transfer.paymentId)).toEqual([]);

  // No execution ran twice under one name.
  const executions = (await readFile(join(service.dataDir, 'executions.jsonl'), 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { name: string });
  const names = executions.map((execution) => execution.name);
  expect(names.length - new Set(names).size).toBe(0);
}, 1_200_000);
