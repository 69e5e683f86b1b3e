import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbCreditTransferList } from '#adapters/credit-transfers/credit-transfer-list';
import {
  DynamoDbCreditTransferStore,
  toCreditTransferItem,
} from '#adapters/credit-transfers/credit-transfer-store';
import { creditTransferKey, withoutListValues } from '#adapters/table/keys';
import { createTableInput, LIST_INDEXES, TABLE_DEFINITION } from '#adapters/table/table-definition';
import type { CreditTransferRequest } from '#domain/credit-transfers/credit-transfer';
import type { ListPageRequest } from '#domain/credit-transfers/list-credit-transfers';
import type { ListFilters } from '#domain/credit-transfers/list-filters';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import { type DynaliteProcess, startDynalite } from '#local/dynalite-process';
import { createDynamoDbClient, ensureTable } from '#local/table';

const TABLE = 'credit-transfers';
let dataDir: string;
let dynalite: DynaliteProcess;
let client: DynamoDBClient;
let documents: DocumentClient;
let store: DynamoDbCreditTransferStore;

const record = (
  tenant: string,
  createdAt: Date,
  transfer: Partial<CreditTransferRequest> = {},
): CreditTransferRecord => ({
  tenant,
  paymentId: randomUUID(),
  clientId: 'client',
  createdAt: createdAt.toISOString(),
  status: 'Received',
  statusDate: createdAt.toISOString(),
  requestHash: 'hash',
  servicer: {},
  transfer: { paymentMethod: 'CreditTransfer', amount: '1.00', debtorAccountId: 'debtor-1', ...transfer },
  history: [{ status: 'Received', date: createdAt.toISOString(), actor: 'client' }],
});

/** Stores transfers one millisecond apart, the first the oldest; returns them newest first. */
const storeTransfers = async (tenant: string, transfers: Partial<CreditTransferRequest>[]) => {
  const start = Date.now();
  const records = transfers.map((transfer, index) => record(tenant, new Date(start + index), transfer));
  await Promise.all(records.map((r) => store.create(r)));
  return records.reverse();
};

/** Every page from the first, as the use case would ask for them. */
const pageThrough = async (list: DynamoDbCreditTransferList, request: Omit<ListPageRequest, 'withTotal'>) => {
  const pages = [];
  let after = request.after;
  for (let guard = 0; guard < 200; guard++) {
    const page = await list.page({ ...request, ...(after && { after }), withTotal: after === undefined });
    pages.push(page);
    if (page.next === undefined) return pages;
    after = page.next;
  }
  throw new Error('paging did not end');
};
const ids = (records: CreditTransferRecord[]) => records.map((r) => r.paymentId);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'list-store-'));
  dynalite = await startDynalite({ socket: join(dataDir, 'dynamodb.sock'), path: join(dataDir, 'dynamodb') });
  client = createDynamoDbClient({ socket: dynalite.socket });
  documents = createDocumentClient(undefined, dynalite.socket);
  await ensureTable(client, TABLE);
  store = new DynamoDbCreditTransferStore(documents, TABLE);
});

afterAll(async () => {
  dynalite?.child.kill();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('DynamoDbCreditTransferList', () => {
  it('lists a tenant newest first, and never another tenant with the same account ids', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const other = `o${randomUUID().slice(0, 8)}`;
    const mine = await storeTransfers(tenant, [{}, { creditorAccountId: 'shared' }, {}]);
    await storeTransfers(other, [{}, { creditorAccountId: 'shared' }]);
    const list = new DynamoDbCreditTransferList(documents, TABLE);

    const all = await list.page({ tenant, filters: {}, limit: 10, withTotal: true });
    expect(ids(all.records)).toEqual(ids(mine));
    expect(all.total).toBe(3);
    expect(all.next).toBeUndefined();

    for (const filters of [{ 'debtorAccountId.eq': 'debtor-1' }, { 'creditorAccountId.eq': 'shared' }]) {
      const page = await list.page({ tenant, filters, limit: 10, withTotal: true });
      expect(
        page.records.every((r) => r.tenant === tenant),
        JSON.stringify(filters),
      ).toBe(true);
    }
  });

  it('reads the creditor indexes only for transfers that name that creditor field', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const [withNumber, withoutCreditor] = await storeTransfers(tenant, [
      {},
      { creditor: { account: { accountNumber: 'BBAN-1' } } },
    ]);
    const item = (
      await documents.get({
        TableName: TABLE,
        Key: creditTransferKey(tenant, withoutCreditor?.paymentId as string),
      })
    ).Item;
    expect(item).toBeDefined();
    expect(item).not.toHaveProperty(LIST_INDEXES.creditorAccountId.partitionKey);
    expect(item).not.toHaveProperty(LIST_INDEXES.creditorAccountNumber.partitionKey);

    const list = new DynamoDbCreditTransferList(documents, TABLE);
    const page = await list.page({
      tenant,
      filters: { 'creditorAccountNumber.eq': 'BBAN-1' },
      limit: 10,
      withTotal: true,
    });
    expect(ids(page.records)).toEqual([withNumber?.paymentId]);
  });

  it('lists a transfer once when its index answers it twice, as a torn local index can', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const mine = await storeTransfers(tenant, [{}, {}]);
    // The index's answer with its first entry twice; the table behind it is dynalite's.
    const twice = new Proxy(documents, {
      get: (target, name, receiver) =>
        name === 'query'
          ? async (input: QueryCommandInput) => {
              const result = await target.query(input);
              return { ...result, Items: [...(result.Items ?? []).slice(0, 1), ...(result.Items ?? [])] };
            }
          : Reflect.get(target, name, receiver),
    });
    const list = new DynamoDbCreditTransferList(twice, TABLE);
    const page = await list.page({ tenant, filters: {}, limit: 10, withTotal: false });
    expect(ids(page.records)).toEqual(ids(mine));
  });

  it('gives back the record as the store reads it, without index attributes', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const [stored] = await storeTransfers(tenant, [
      { creditorAccountId: 'c-1', check: { checkNumber: '7' } },
    ]);
    const list = new DynamoDbCreditTransferList(documents, TABLE);
    const page = await list.page({ tenant, filters: {}, limit: 1, withTotal: true });
    expect(page.records).toEqual([await store.get(tenant, stored?.paymentId ?? '')]);
    expect(page.records[0]).toEqual(stored);
  });

  it('stops at its read budget with a cursor past what it read, and still finds every match', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    // The five matches are the oldest, behind 30 that a filter drops.
    const stored = await storeTransfers(tenant, [
      ...Array.from({ length: 5 }, () => ({ paymentMethod: 'Check' })),
      ...Array.from({ length: 30 }, () => ({})),
    ]);
    const reads: string[] = [];
    const list = new DynamoDbCreditTransferList(documents, TABLE, {
      budget: { maxQueries: 5, maxItemsRead: 10 },
      onCapacity: (operation) => reads.push(operation),
    });
    const filters: ListFilters = { 'paymentMethod.eq': 'Check' };

    const first = await list.page({ tenant, filters, limit: 3, withTotal: true });
    expect(first.records).toEqual([]);
    expect(first.total).toBe(5);
    expect(first.next).toEqual({ createdAt: stored[9]?.createdAt, paymentId: stored[9]?.paymentId });
    expect(reads.filter((operation) => operation === 'listQuery').length).toBeLessThanOrEqual(5);

    const pages = await pageThrough(list, { tenant, filters, limit: 3, after: first.next });
    expect(ids(pages.flatMap((page) => page.records))).toEqual(ids(stored.slice(30)));
  });

  it('counts at most its bound of index entries, then reports the total as a lower bound', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    // Newest first: 3 checks, 4 others, then 5 checks; the count reads 6 entries at most.
    await storeTransfers(tenant, [
      ...Array.from({ length: 5 }, () => ({ paymentMethod: 'Check' })),
      ...Array.from({ length: 4 }, () => ({})),
      ...Array.from({ length: 3 }, () => ({ paymentMethod: 'Check' })),
    ]);
    const bounded = new DynamoDbCreditTransferList(documents, TABLE, { maxCounted: 6 });
    const all = await bounded.page({ tenant, filters: {}, limit: 2, withTotal: true });
    expect(all).toMatchObject({ total: 6, totalIsLowerBound: true });
    const checks = await bounded.page({
      tenant,
      filters: { 'paymentMethod.eq': 'Check' },
      limit: 2,
      withTotal: true,
    });
    expect(checks).toMatchObject({ total: 3, totalIsLowerBound: true });

    // At the bound exactly, nothing follows: the count is exact.
    const exact = new DynamoDbCreditTransferList(documents, TABLE, { maxCounted: 12 });
    const page = await exact.page({ tenant, filters: {}, limit: 2, withTotal: true });
    expect(page.total).toBe(12);
    expect(page.totalIsLowerBound).toBeUndefined();
  });

  it('counts the matches when paging began: later transfers neither count nor appear', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const stored = await storeTransfers(
      tenant,
      Array.from({ length: 7 }, () => ({})),
    );
    const list = new DynamoDbCreditTransferList(documents, TABLE);
    const first = await list.page({ tenant, filters: {}, limit: 3, withTotal: true });
    expect(first.total).toBe(7);
    await storeTransfers(tenant, [{}, {}]);
    const rest = await pageThrough(list, {
      tenant,
      filters: {},
      limit: 3,
      ...(first.next && { after: first.next }),
    });
    expect([...ids(first.records), ...ids(rest.flatMap((page) => page.records))]).toEqual(ids(stored));
  });

  it('reports the read capacity of the page query, the table reads and the count', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    await storeTransfers(
      tenant,
      Array.from({ length: 5 }, () => ({})),
    );
    const units = new Map<string, number>();
    const list = new DynamoDbCreditTransferList(documents, TABLE, {
      onCapacity: (operation, capacity) => units.set(operation, (units.get(operation) ?? 0) + capacity),
    });
    await list.page({ tenant, filters: { 'amount.gte': '0' }, limit: 2, withTotal: true });
    expect([...units.keys()].sort()).toEqual(['listBatchGet', 'listCount', 'listQuery']);
    for (const value of units.values()) expect(value).toBeGreaterThan(0);
  });
});

describe('a local table from before the list indexes', () => {
  const untilActive = async (name: string) => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
      if (Table?.TableStatus === 'ACTIVE') return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const untilGone = async (name: string) => {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        await client.send(new DescribeTableCommand({ TableName: name }));
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const oldTable = async (name: string) => {
    const { GlobalSecondaryIndexes: _indexes, ...input } = createTableInput(name);
    const keys = new Set(['pk', 'sk']);
    await client.send(
      new CreateTableCommand({
        ...input,
        AttributeDefinitions: input.AttributeDefinitions?.filter((a) => keys.has(a.AttributeName ?? '')),
      }),
    );
    await untilActive(name);
    const old = record('tenant-old', new Date('2025-01-01T00:00:00.000Z'), { creditorAccountId: 'c-1' });
    await documents.put({ TableName: name, Item: withoutListValues(toCreditTransferItem(old)) });
    // Stored when the list existed but its status index did not.
    const { [LIST_INDEXES.status.partitionKey]: _status, ...beforeStatusIndex } = toCreditTransferItem(
      record('tenant-mid', new Date('2025-06-01T00:00:00.000Z'), {}),
    );
    await documents.put({ TableName: name, Item: beforeStatusIndex });
    await documents.put({ TableName: name, Item: { pk: 'CLIENT#x', sk: 'CLIENT', type: 'Client' } });
    return old;
  };

  const expectMigrated = async (name: string, old: CreditTransferRecord) => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual(
      TABLE_DEFINITION.indexes.map((index) => index.indexName).sort(),
    );
    const list = new DynamoDbCreditTransferList(documents, name);
    for (const filters of [{}, { 'creditorAccountId.eq': 'c-1' }, { 'status.eq': old.status }]) {
      const page = await list.page({ tenant: 'tenant-old', filters, limit: 10, withTotal: true });
      expect(page.records).toEqual([old]);
    }
    const clientItem = await documents.get({ TableName: name, Key: { pk: 'CLIENT#x', sk: 'CLIENT' } });
    expect(clientItem.Item).toEqual({ pk: 'CLIENT#x', sk: 'CLIENT', type: 'Client' });
    await expect(client.send(new DescribeTableCommand({ TableName: `${name}.rebuild` }))).rejects.toThrow();
  };

  it('gets the indexes, and its transfers are listed', async () => {
    const old = await oldTable('old-table');
    await ensureTable(client, 'old-table');
    await expectMigrated('old-table', old);
    const list = new DynamoDbCreditTransferList(documents, 'old-table');
    const byStatus = await list.page({
      tenant: 'tenant-mid',
      filters: { 'status.eq': old.status },
      limit: 10,
      withTotal: true,
    });
    expect(byStatus.records).toHaveLength(1);
    // A second start finds nothing to do.
    await ensureTable(client, 'old-table');
    await expectMigrated('old-table', old);
  });

  it('finishes a rebuild that stopped after the old table was dropped', async () => {
    const old = await oldTable('stopped-table');
    // What a rebuild leaves when stopped after the copy to the side table and the drop.
    await client.send(new CreateTableCommand(createTableInput('stopped-table.rebuild')));
    await untilActive('stopped-table.rebuild');
    await documents.put({ TableName: 'stopped-table.rebuild', Item: toCreditTransferItem(old) });
    await documents.put({
      TableName: 'stopped-table.rebuild',
      Item: { pk: 'CLIENT#x', sk: 'CLIENT', type: 'Client' },
    });
    await client.send(new DeleteTableCommand({ TableName: 'stopped-table' }));
    await untilGone('stopped-table');

    await ensureTable(client, 'stopped-table');
    await expectMigrated('stopped-table', old);
  });
});
