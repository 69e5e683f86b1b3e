import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientKey, creditTransferKey } from '#adapters/table/keys';
import { createTableInput, RECOVERY_INDEX, TABLE_DEFINITION } from '#adapters/table/table-definition';
import { createDynamoDbClient } from '#local/table';
import {
  createActiveTable,
  DynamoDbDrillTables,
  TableCopyRecoveryPoints,
} from '../../../scripts/recovery/drill-tables.ts';
import {
  type RecoveryPoint,
  type RecoveryPoints,
  RestoreDrillFailedError,
  runRestoreDrill,
  UnsafeScratchTableError,
} from '../../../scripts/recovery/restore-drill.ts';

/**
 * The restore drill over two real local tables (dynalite, as the local runtime uses): the live
 * table, and the scratch table a "recovery point" is restored into. Only AWS Backup is stood in
 * for (a copy of the live table); the comparison and the safety checks are the drill's own.
 */
const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => Server;

let server: Server;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let tables: DynamoDbDrillTables;
let live: string;
let run = 0;

beforeAll(async () => {
  server = dynalite({ createTableMs: 0, deleteTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = createDynamoDbClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  documents = DynamoDBDocumentClient.from(client);
  tables = new DynamoDbDrillTables(client);
});
afterAll(async () => {
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const payment = (tenant: string, paymentId: string, status: string) => ({
  ...creditTransferKey(tenant, paymentId),
  status,
  paymentId,
  instructedAmount: { amount: '12.50', currency: 'EUR' },
  history: [{ status: 'Received', date: '2026-11-26T10:00:00Z' }],
});

beforeEach(async () => {
  run += 1;
  live = `live-${run}`;
  await createActiveTable(client, live);
  const items = [
    payment('acme', 'p1', 'AcceptedSettlementCompleted'),
    payment('acme', 'p2', 'Rejected'),
    payment('globex', 'p3', 'AcceptedSettlementInProcess'),
    // Final, but its events not all published yet: still on the recovery index, still written to.
    { ...payment('globex', 'p5', 'Cancelled'), [RECOVERY_INDEX.partitionKey]: 'RECOVERY#1' },
    { ...clientKey('acme-erp'), tenant: 'acme' },
    // Expires: left out of the counts.
    { pk: 'THROTTLE#acme-erp', sk: 'SOURCE#10.0.0.1', [TABLE_DEFINITION.timeToLiveAttribute]: 1 },
  ];
  for (const Item of items) await documents.send(new PutCommand({ TableName: live, Item }));
});

const scratchOf = () => `${live}-drill`;

/** AWS Backup as the test needs it: the live table copied, then changed as `damage` says. */
const restoring = (damage: (scratch: string) => Promise<void> = async () => {}): RecoveryPoints => {
  const copy = new TableCopyRecoveryPoints(client, live);
  return {
    latest: () => copy.latest(),
    restore: async (point: RecoveryPoint, target: string) => {
      await copy.restore(point, target);
      await damage(target);
    },
  };
};

const drill = (
  points: RecoveryPoints,
  options: { exact?: boolean; scratchTable?: string; tables?: DynamoDbDrillTables } = {},
) =>
  runRestoreDrill(points, options.tables ?? tables, {
    scratchTable: options.scratchTable ?? scratchOf(),
    sampleSize: 10,
    exact: options.exact ?? true,
  });

const failureOf = async (promise: Promise<unknown>): Promise<RestoreDrillFailedError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RestoreDrillFailedError);
  return error as RestoreDrillFailedError;
};

describe('the restore drill', () => {
  it('passes a faithful restore, counts by kind of item, and deletes the scratch table', async () => {
    const report = await drill(restoring());
    expect(report.problems).toEqual([]);
    expect(report.liveTable).toBe(live);
    expect(report.counts).toEqual([
      { kind: 'CLIENT', restored: 1, live: 1 },
      { kind: 'PAYMENT', restored: 4, live: 4 },
    ]);
    expect(report.sampled).toBe(4);
    expect(report.restoreSeconds).toBeGreaterThanOrEqual(0);
    expect(await tables.exists(scratchOf())).toBe(false);
    expect(await tables.exists(live)).toBe(true);
  });

  it('fails loudly when a kind of item has another count, and still deletes the scratch table', async () => {
    const failure = await failureOf(
      drill(
        restoring(async (scratch) => {
          await documents.send(new DeleteCommand({ TableName: scratch, Key: clientKey('acme-erp') }));
        }),
      ),
    );
    expect(failure.message).toContain('CLIENT: 0 items restored, 1 live');
    expect(await tables.exists(scratchOf())).toBe(false);
  });

  it('fails when a sampled payment differs from the live one, naming the field', async () => {
    const failure = await failureOf(
      drill(
        restoring(async (scratch) => {
          await documents.send(
            new UpdateCommand({
              TableName: scratch,
              Key: creditTransferKey('acme', 'p2'),
              UpdateExpression: 'SET instructedAmount = :amount',
              ExpressionAttributeValues: { ':amount': { amount: '12.51', currency: 'EUR' } },
            }),
          );
        }),
      ),
    );
    expect(failure.report.problems).toEqual([
      `payment ${creditTransferKey('acme', 'p2').pk} differs in instructedAmount`,
    ]);
    expect(failure.message).not.toContain('12.51');
    expect(await tables.exists(scratchOf())).toBe(false);
  });

  it('deletes the scratch table when the restore itself fails', async () => {
    const error = await drill(
      restoring(async () => {
        throw new Error('restore job FAILED');
      }),
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe('restore job FAILED');
    expect(await tables.exists(scratchOf())).toBe(false);
  });

  it("refuses the live table's name as the scratch table, and leaves the live table as it is", async () => {
    await expect(drill(restoring(), { scratchTable: live })).rejects.toThrow(UnsafeScratchTableError);
    await expect(drill(restoring(), { scratchTable: live })).rejects.toThrow(/is the live table/);
    expect(await tables.exists(live)).toBe(true);
    const report = await drill(restoring());
    expect(report.counts.find((c) => c.kind === 'PAYMENT')?.live).toBe(4);
  });

  it('refuses a scratch table that exists already, which it would otherwise delete', async () => {
    const other = `${live}-other`;
    await client.send(new CreateTableCommand(createTableInput(other)));
    await expect(drill(restoring(), { scratchTable: other })).rejects.toThrow(/exists already/);
    expect(await tables.exists(other)).toBe(true);
  });

  it('against a live table that moved on: more live items pass, fewer fail', async () => {
    const moved = await drill(
      restoring(async () => {
        await documents.send(new PutCommand({ TableName: live, Item: payment('acme', 'p4', 'Received') }));
      }),
      { exact: false },
    );
    expect(moved.problems).toEqual([]);
    // Only the settled payments (final, off the recovery index), which nothing changes.
    expect(moved.sampled).toBe(2);
    const lost = await failureOf(
      drill(
        restoring(async () => {
          await documents.send(new DeleteCommand({ TableName: live, Key: creditTransferKey('acme', 'p1') }));
        }),
        { exact: false },
      ),
    );
    expect(lost.report.problems).toContain('PAYMENT: 5 items restored, 4 live');
    expect(lost.report.problems).toContain(
      `payment ${creditTransferKey('acme', 'p1').pk} is restored but not live`,
    );
  });

  it('restores into a table that takes a while to become active, as on DynamoDB, and waits for its deletion', async () => {
    // A second dynalite that keeps a new table CREATING (and a deleted one DELETING) a moment,
    // as DynamoDB does: a write before the table is ACTIVE is refused as ResourceNotFoundException.
    const slow = dynalite({ createTableMs: 300, deleteTableMs: 300 });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const slowClient = createDynamoDbClient(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`);
    try {
      const slowTables = new DynamoDbDrillTables(slowClient);
      await createActiveTable(slowClient, live);
      const slowDocuments = DynamoDBDocumentClient.from(slowClient);
      await slowDocuments.send(new PutCommand({ TableName: live, Item: payment('acme', 'p1', 'Rejected') }));

      const report = await drill(new TableCopyRecoveryPoints(slowClient, live), { tables: slowTables });

      expect(report.problems).toEqual([]);
      expect(report.counts).toEqual([{ kind: 'PAYMENT', restored: 1, live: 1 }]);
      expect(await slowTables.exists(scratchOf())).toBe(false);
    } finally {
      slowClient.destroy();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});
