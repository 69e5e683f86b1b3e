import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbBatchStore } from '#adapters/iso20022/batch-store';
import type { CreditTransferStatus } from '#domain/credit-transfers/credit-transfer-status';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import {
  batchCompletedEventId,
  countFinalTransfer,
  groupStatusOf,
  tallyOf,
} from '#domain/iso20022/batch-outcome';
import type { BatchCompletedEvent, BatchRecord } from '#domain/iso20022/ports';
import { type DynaliteProcess, startDynalite } from '#local/dynalite-process';
import { createDynamoDbClient, ensureTable } from '#local/table';

const TABLE = 'credit-transfers';
let dataDir: string;
let dynalite: DynaliteProcess;
let client: DynamoDBClient;
let batches: DynamoDbBatchStore;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'batch-outcome-'));
  dynalite = await startDynalite({ socket: join(dataDir, 'dynamodb.sock'), path: join(dataDir, 'dynamodb') });
  client = createDynamoDbClient({ socket: dynalite.socket });
  await ensureTable(client, TABLE);
  batches = new DynamoDbBatchStore(createDocumentClient(undefined, dynalite.socket), TABLE);
});

afterAll(async () => {
  dynalite?.child.kill();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

let next = 0;
const newBatch = async (count: number): Promise<BatchRecord> => {
  const batch: BatchRecord = {
    tenant: 'outcome',
    batchId: `00000000-0000-4000-8000-${String(++next).padStart(12, '0')}`,
    clientId: 'client',
    createdAt: new Date().toISOString(),
    requestHash: 'hash',
    state: 'Stored',
    count,
    message: { messageId: `MSG-${next}`, messageName: 'CreditTransferBatchJSON', groups: [] },
  };
  expect(await batches.create(batch)).toBe(true);
  return batch;
};

const finalTransfer = (
  batch: BatchRecord,
  position: number,
  status: CreditTransferStatus,
  reason?: { statusReason: string; statusReasonCode: string },
): CreditTransferRecord =>
  ({
    tenant: batch.tenant,
    paymentId: `payment-${position}`,
    status,
    ...reason,
    batch: { batchId: batch.batchId, position },
  }) as CreditTransferRecord;

const published: BatchCompletedEvent[] = [];
const deps = (
  publish: (event: BatchCompletedEvent) => Promise<void> = async (e) => void published.push(e),
) => ({
  batches,
  publisher: { publishBatchCompleted: publish },
  clock: { now: () => new Date('2026-12-01T10:00:00.000Z') },
});

describe('batch outcome on the table', () => {
  it('counts each transfer once however often its publish step runs, and completes the batch once', async () => {
    const batch = await newBatch(3);
    const rejected = finalTransfer(batch, 1, 'Rejected', {
      statusReason: 'InsufficientFunds',
      statusReasonCode: 'AM04',
    });
    for (let run = 0; run < 3; run++) await countFinalTransfer(deps(), rejected);
    await countFinalTransfer(deps(), finalTransfer(batch, 0, 'AcceptedSettlementCompleted'));
    let stored = await batches.get(batch.tenant, batch.batchId);
    expect(stored).toMatchObject({
      open: 1,
      countsByStatus: { Rejected: 1, AcceptedSettlementCompleted: 1 },
      countsByReasonCode: { AM04: 1 },
    });
    expect(stored?.completedAt).toBeUndefined();
    expect(published.filter((event) => event.batchId === batch.batchId)).toEqual([]);

    const last = finalTransfer(batch, 2, 'AcceptedSettlementCompleted');
    await countFinalTransfer(deps(), last);
    await countFinalTransfer(deps(), last);
    stored = await batches.get(batch.tenant, batch.batchId);
    expect(stored).toMatchObject({
      open: 0,
      countsByStatus: { Rejected: 1, AcceptedSettlementCompleted: 2 },
      completedAt: '2026-12-01T10:00:00.000Z',
      completionPublished: true,
    });
    expect(published.filter((event) => event.batchId === batch.batchId)).toEqual([
      {
        eventId: batchCompletedEventId(batch.tenant, batch.batchId),
        tenant: batch.tenant,
        batchId: batch.batchId,
        completedAt: '2026-12-01T10:00:00.000Z',
      },
    ]);
  });

  it('a run that counted the last transfer and failed to publish is finished by the next run of any step', async () => {
    const batch = await newBatch(1);
    const last = finalTransfer(batch, 0, 'Cancelled', {
      statusReason: 'RequestedByCustomer',
      statusReasonCode: 'CUST',
    });
    await expect(
      countFinalTransfer(
        deps(async () => {
          throw new Error('bus away');
        }),
        last,
      ),
    ).rejects.toThrow('bus away');
    expect(await batches.get(batch.tenant, batch.batchId)).toMatchObject({ open: 0 });
    await countFinalTransfer(deps(), last);
    const stored = await batches.get(batch.tenant, batch.batchId);
    expect(stored).toMatchObject({ open: 0, countsByStatus: { Cancelled: 1 }, completionPublished: true });
    expect(published.filter((event) => event.batchId === batch.batchId)).toHaveLength(1);
  });

  it('leaves a transfer that is not final, or not of a batch, uncounted', async () => {
    const batch = await newBatch(1);
    await countFinalTransfer(deps(), finalTransfer(batch, 0, 'AcceptedSettlementInProcess'));
    await countFinalTransfer(deps(), { ...finalTransfer(batch, 0, 'Rejected'), batch: undefined });
    expect(await batches.get(batch.tenant, batch.batchId)).toMatchObject({ open: 1, countsByStatus: {} });
  });
});

describe('ISO group status', () => {
  it.each([
    [['AcceptedSettlementCompleted', 'Received'], 'ACCP'],
    [['Rejected', 'AcceptedSettlementInProcess'], 'ACCP'],
    [['AcceptedSettlementCompleted', 'AcceptedSettlementCompleted'], 'ACSC'],
    [['AcceptedSettlementCompleted', 'Rejected'], 'PART'],
    [['Cancelled', 'AcceptedSettlementCompleted'], 'PART'],
    [['Rejected', 'Rejected'], 'RJCT'],
    [['Rejected', 'Cancelled'], 'RJCT'],
  ] as const)('%j is %s', (statuses, code) => {
    expect(groupStatusOf(tallyOf(statuses))).toBe(code);
  });
});
