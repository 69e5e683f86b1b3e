import { afterAll, beforeAll, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
});

import { documentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbCreditTransferList } from '#adapters/credit-transfers/credit-transfer-list';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import { creditTransferKey, recoveryIndexValues } from '#adapters/table/keys';
import { initiate, lifecycleStore, startWorkflowEnvironment, stored, TABLE, TENANT } from './harness.ts';

/**
 * The start-up realign drops an index entry whose record is gone by writing a placeholder item
 * that holds the entry and deleting it. A stop between the two writes leaves the placeholder: the
 * next realign must delete it, not take it for a transfer to drive on.
 */

let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;

beforeAll(async () => {
  environment = await startWorkflowEnvironment();
});

afterAll(async () => {
  await environment.close();
});

it('deletes the placeholder a stop left between its two writes, and leaves real transfers be', async () => {
  const kept = await initiate(undefined);
  const due = '2026-01-01T00:00:00.000Z';
  const key = creditTransferKey(TENANT, 'left-by-a-stop');
  // The placeholder's write, as dropEntryWithoutRecord makes it, without its delete.
  await documentClient().put({
    TableName: TABLE,
    Item: { ...key, ...recoveryIndexValues(TENANT, 'left-by-a-stop', due) },
  });
  expect((await lifecycleStore().due(undefined, 100)).map((entry) => entry.paymentId)).toContain(
    'left-by-a-stop',
  );

  expect(await lifecycleStore().realign(new Date())).toBeGreaterThan(0);

  expect(
    (await documentClient().get({ TableName: TABLE, Key: key, ConsistentRead: true })).Item,
  ).toBeUndefined();
  const dueAfter = (await lifecycleStore().due(undefined, 100)).map((entry) => entry.paymentId);
  expect(dueAfter).not.toContain('left-by-a-stop');
  expect(dueAfter).toContain(kept);
  expect((await stored(kept)).status).toBe('Received');
  // Nothing left to repair.
  expect(await lifecycleStore().realign(new Date())).toBe(0);
});

it('reads a placeholder met between its two writes as no transfer: the status read finds none, a list page leaves it out', async () => {
  const shown = await initiate(undefined);
  const hidden = await initiate(undefined);
  const key = creditTransferKey(TENANT, hidden);
  // The moment a list page can meet: an index entry of the key still there, its item a placeholder.
  const { Item } = await documentClient().get({ TableName: TABLE, Key: key, ConsistentRead: true });
  const { transfer: _transfer, status: _status, ...placeholder } = Item ?? {};
  await documentClient().put({ TableName: TABLE, Item: placeholder });

  expect(await new DynamoDbCreditTransferStore(documentClient(), TABLE).get(TENANT, hidden)).toBeUndefined();
  const page = await new DynamoDbCreditTransferList(documentClient(), TABLE).page({
    tenant: TENANT,
    filters: {},
    limit: 50,
    withTotal: false,
  });
  const listed = page.records.map((record) => record.paymentId);
  expect(listed).toContain(shown);
  expect(listed).not.toContain(hidden);
});
