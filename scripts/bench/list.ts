import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbCreditTransferList } from '#adapters/credit-transfers/credit-transfer-list';
import { toCreditTransferItem } from '#adapters/credit-transfers/credit-transfer-store';
import { DynamoDbBatchList } from '#adapters/iso20022/batch-list';
import { batchKey, batchListValues, listDebtorAccountIdKey } from '#adapters/table/keys';
import { createTableInput, LIST_ENTRY_ATTRIBUTE, LIST_INDEXES } from '#adapters/table/table-definition';
import type { CreditTransferRequest } from '#domain/credit-transfers/credit-transfer';
import type { ListFilters } from '#domain/credit-transfers/list-filters';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import type { LocalService } from '#local/service-process';
import { fullCreditTransfer, minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { type BenchClient, fixed, runConcurrently } from './support.ts';

const require = createRequire(import.meta.url);
/** dynalite's own item size: the size DynamoDB bills by. */
const { itemSize } = require('dynalite/db') as { itemSize: (item: unknown) => number };

const TABLE = 'credit-transfers';
/** The tenant of the local client that the HTTP requests run as. */
const TENANT = 'local';
const MEASURED_ACCOUNT = 'bench-measured';
const MEASURED_TRANSFERS = 300;
const COUNT_SIZES = [100, 1_000, 10_000] as const;
const PAGE = 100;
/** Status changes after Received in a transfer's life (to AcceptedSettlementCompleted). */
const STATUS_UPDATES = 4;

/** The transfers found by reference: one batch, each with its own end-to-end and instruction id. */
const REFERENCED_BATCH = '0b0d5c1e-7d8a-4f3e-9c41-2a6b7e5d4c3f';
const REFERENCED_TRANSFERS = 300;
/** The tenant's batches (the list of batches), and other tenants' per table size. */
const TENANT_BATCHES = 300;

const recordOf = (
  tenant: string,
  createdAt: number,
  transfer: CreditTransferRequest,
): CreditTransferRecord => {
  const date = new Date(createdAt).toISOString();
  return {
    tenant,
    paymentId: randomUUID(),
    clientId: 'bench',
    createdAt: date,
    status: 'Received',
    statusDate: date,
    requestHash: 'f'.repeat(64),
    servicer: {},
    transfer,
    history: [{ status: 'Received', date, actor: 'bench' }],
  };
};

/** Writes items with BatchWriteItem, 25 at a time, `concurrency` batches in flight. */
const load = async (client: DocumentClient, tableName: string, items: Record<string, unknown>[]) => {
  const batches: Record<string, unknown>[][] = [];
  for (let start = 0; start < items.length; start += 25) batches.push(items.slice(start, start + 25));
  await runConcurrently({ requests: batches.length, concurrency: 16 }, async (index) => {
    let requests = (batches[index] ?? []).map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const result = await client.batchWrite({ RequestItems: { [tableName]: requests } });
      requests = (result.UnprocessedItems?.[tableName] ?? []) as typeof requests;
    }
  });
};

/** Transfers of other tenants and other accounts: the table grows, the measured partition does not. */
const background = (count: number, seed: number): Record<string, unknown>[] =>
  Array.from({ length: count }, (_, index) => {
    const n = seed + index;
    const tenant = n % 5 === 0 ? TENANT : `bench-${n % 7}`;
    return toCreditTransferItem(
      recordOf(
        tenant,
        Date.now() - n * 1000,
        minimalCreditTransfer({
          debtorAccountId: `bench-acc-${n % 997}`,
          amount: `${(n % 10_000) + 1}.${String(n % 100).padStart(2, '0')}`,
          ...(n % 3 === 0 && { creditorAccountId: `bench-creditor-${n % 101}` }),
        }) as CreditTransferRequest,
      ),
    );
  });

const percentile = (sorted: number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;

/** Batch items as the batch store writes them (with their list index values). */
const batchItems = (tenant: string, count: number, newest: number): Record<string, unknown>[] =>
  Array.from({ length: count }, (_, index) => {
    const createdAt = new Date(newest - index * 1000).toISOString();
    const batchId = randomUUID();
    return {
      ...batchKey(tenant, batchId),
      type: 'Batch',
      ...batchListValues(tenant, createdAt, batchId),
      tenant,
      batchId,
      clientId: 'bench',
      createdAt,
      requestHash: 'f'.repeat(64),
      state: 'Stored',
      count: 1,
      open: 0,
      countsByStatus: { AcceptedSettlementCompleted: 1 },
      countsByReasonCode: {},
      message: { messageId: batchId.replaceAll('-', ''), messageName: 'CreditTransferBatchJSON', groups: [] },
    };
  });

/** The transfers of one batch, each with an end-to-end and an instruction id of its own. */
const referencedTransfers = (newest: number): Record<string, unknown>[] =>
  Array.from({ length: REFERENCED_TRANSFERS }, (_, index) =>
    toCreditTransferItem({
      ...recordOf(
        TENANT,
        newest,
        minimalCreditTransfer({
          identifiers: [
            { number: `BENCH-E2E-${index}`, schemeName: 'EndToEndId' },
            { number: `BENCH-INS-${index}`, schemeName: 'InstrId' },
          ],
        }) as CreditTransferRequest,
      ),
      batch: { batchId: REFERENCED_BATCH, position: index },
    }),
  );

interface ReferenceReads {
  label: string;
  /** Items the page's reads returned: index entries of the Query, items of the BatchGetItem. */
  indexEntries: number;
  items: number;
  readUnits: number;
}

/** Counts what each Query and BatchGetItem returns and what it costs, for any adapter on this client. */
const countingClient = (client: DocumentClient) => {
  const reads = { indexEntries: 0, items: 0, readUnits: 0 };
  const counted = new Proxy(client, {
    get(target, name, receiver) {
      if (name === 'query')
        return async (input: Parameters<DocumentClient['query']>[0]) => {
          const result = await target.query({ ...input, ReturnConsumedCapacity: 'TOTAL' });
          reads.indexEntries += result.Items?.length ?? 0;
          reads.readUnits += result.ConsumedCapacity?.CapacityUnits ?? 0;
          return result;
        };
      if (name === 'batchGet')
        return async (input: Parameters<DocumentClient['batchGet']>[0]) => {
          const result = await target.batchGet({ ...input, ReturnConsumedCapacity: 'TOTAL' });
          reads.items += Object.values(result.Responses ?? {}).reduce((sum, items) => sum + items.length, 0);
          reads.readUnits += (result.ConsumedCapacity ?? []).reduce(
            (sum, entry) => sum + (entry.CapacityUnits ?? 0),
            0,
          );
          return result;
        };
      return Reflect.get(target, name, receiver);
    },
  });
  return { client: counted, reads };
};

/** One page of each reference filter and of the batches list: what it reads. */
const measureReferences = async (socket: string): Promise<ReferenceReads[]> => {
  const rows: ReferenceReads[] = [];
  const transfers = async (label: string, filters: ListFilters) => {
    const { client, reads } = countingClient(createDocumentClient(undefined, socket));
    const list = new DynamoDbCreditTransferList(client, TABLE);
    const page = await list.page({ tenant: TENANT, filters, limit: PAGE, withTotal: false });
    if (page.records.length === 0) throw new Error(`${label} found nothing`);
    rows.push({ label: `${label} (${page.records.length} on the page)`, ...reads });
  };
  await transfers('endToEndId.eq', { 'endToEndId.eq': 'BENCH-E2E-7' });
  await transfers('instructionId.eq', { 'instructionId.eq': 'BENCH-INS-7' });
  await transfers('batchId.eq', { 'batchId.eq': REFERENCED_BATCH });
  const { client, reads } = countingClient(createDocumentClient(undefined, socket));
  const batches = await new DynamoDbBatchList(client, TABLE).page({ tenant: TENANT, limit: PAGE });
  rows.push({ label: `batches, newest first (${batches.batches.length} on the page)`, ...reads });
  return rows;
};

interface PageFigures {
  p50Ms: number;
  p95Ms: number;
  /** Read units of the page's Query, its BatchGetItem, and (first page) the count. */
  queryUnits: number;
  batchGetUnits: number;
  countUnits: number;
}

/** Latency over HTTP (the whole stack) and read units through the same adapter the handler uses. */
const measurePage = async (
  socket: string,
  api: BenchClient,
  options: { withCursor: boolean; runs: number },
): Promise<PageFigures> => {
  const path = `/v1/payments/credit-transfers?debtorAccountId.eq=${MEASURED_ACCOUNT}&limit=${PAGE}`;
  const first = await api.get(path);
  if (first.status !== 200) throw new Error(`list answered ${first.status}: ${first.text}`);
  const cursor = String(first.headers['pagination-cursor'] ?? '');
  const target = options.withCursor ? `${path}&cursor=${encodeURIComponent(cursor)}` : path;
  const latencies: number[] = [];
  for (let run = 0; run < options.runs; run++) {
    const begin = performance.now();
    const reply = await api.get(target);
    latencies.push(performance.now() - begin);
    if (reply.status !== 200 || (JSON.parse(reply.text) as unknown[]).length !== PAGE) {
      throw new Error(`list answered ${reply.status} with a short page: ${reply.text.slice(0, 200)}`);
    }
  }
  latencies.sort((a, b) => a - b);

  const units = { listQuery: 0, listBatchGet: 0, listCount: 0 } as Record<string, number>;
  const list = new DynamoDbCreditTransferList(createDocumentClient(undefined, socket), TABLE, {
    onCapacity: (operation, capacity) => {
      units[operation] = (units[operation] ?? 0) + capacity;
    },
  });
  const filters: ListFilters = { 'debtorAccountId.eq': MEASURED_ACCOUNT };
  const page = await list.page({ tenant: TENANT, filters, limit: PAGE, withTotal: true });
  if (options.withCursor) {
    for (const key of Object.keys(units)) units[key] = 0;
    await list.page({
      tenant: TENANT,
      filters,
      limit: PAGE,
      withTotal: false,
      ...(page.next && { after: page.next }),
    });
  }
  return {
    p50Ms: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
    queryUnits: units.listQuery ?? 0,
    batchGetUnits: units.listBatchGet ?? 0,
    countUnits: units.listCount ?? 0,
  };
};

/** Read units of Pagination-Total alone, for accounts with 100, 1,000 and 10,000 transfers. */
const measureCounts = async (socket: string) => {
  const rows = [];
  for (const size of COUNT_SIZES) {
    for (const filters of [
      { 'debtorAccountId.eq': `bench-count-${size}` },
      { 'debtorAccountId.eq': `bench-count-${size}`, 'amount.gte': '0' },
    ] satisfies ListFilters[]) {
      let countUnits = 0;
      const list = new DynamoDbCreditTransferList(createDocumentClient(undefined, socket), TABLE, {
        onCapacity: (operation, capacity) => {
          if (operation === 'listCount') countUnits += capacity;
        },
      });
      const begin = performance.now();
      const page = await list.page({ tenant: TENANT, filters, limit: PAGE, withTotal: true });
      const ms = performance.now() - begin;
      rows.push({
        matching: size,
        refined: 'amount.gte' in filters,
        total: page.total ?? 0,
        countUnits,
        pageMs: ms,
      });
    }
  }
  return rows;
};

interface ProjectionReads {
  label: string;
  includeQuery: number;
  includeBatchGet: number;
  allQuery: number;
}

/**
 * Read units of one page of 100 of an account's transfers: with the INCLUDE indexes (Query, then
 * BatchGetItem of the page) on the service's table, and with ALL projection (one Query) on a side
 * table in the same dynalite holding the same items.
 */
const measureProjections = async (
  socket: string,
  label: string,
  account: string,
  items: Record<string, unknown>[],
): Promise<ProjectionReads> => {
  const client = createDocumentClient(undefined, socket);
  const units: Record<string, number> = {};
  const list = new DynamoDbCreditTransferList(client, TABLE, {
    onCapacity: (operation, capacity) => {
      units[operation] = (units[operation] ?? 0) + capacity;
    },
  });
  await list.page({
    tenant: TENANT,
    filters: { 'debtorAccountId.eq': account },
    limit: PAGE,
    withTotal: false,
  });

  const tableName = `bench-all-projection-${randomUUID().slice(0, 8)}`;
  const input = createTableInput(tableName);
  await client.send(
    new CreateTableCommand({
      ...input,
      GlobalSecondaryIndexes: input.GlobalSecondaryIndexes?.map((index) => ({
        ...index,
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  for (let attempt = 0; attempt < 100; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await load(client, tableName, items);
  const result = await client.query({
    TableName: tableName,
    IndexName: LIST_INDEXES.debtorAccountId.indexName,
    KeyConditionExpression: '#p = :p',
    ExpressionAttributeNames: { '#p': LIST_INDEXES.debtorAccountId.partitionKey },
    ExpressionAttributeValues: { ':p': listDebtorAccountIdKey(TENANT, account) },
    ScanIndexForward: false,
    Limit: PAGE + 1,
    ReturnConsumedCapacity: 'TOTAL',
  });
  return {
    label,
    includeQuery: units.listQuery ?? 0,
    includeBatchGet: units.listBatchGet ?? 0,
    allQuery: result.ConsumedCapacity?.CapacityUnits ?? 0,
  };
};

const INDEX_KEYS = Object.values(LIST_INDEXES).map((index) => index.partitionKey);

/** Write units per transfer for each projection, from item sizes (dynalite does not count index writes). */
const writeCosts = (label: string, item: Record<string, unknown>) => {
  const units = (attributes: Record<string, unknown>) =>
    Math.ceil(itemSize(marshall(attributes, { removeUndefinedValues: true })) / 1024);
  const base = units(item);
  const keys = { pk: item.pk, sk: item.sk, [LIST_INDEXES.all.sortKey]: item[LIST_INDEXES.all.sortKey] };
  const indexes = INDEX_KEYS.filter((name) => item[name] !== undefined);
  const include = indexes.map((name) =>
    units({ ...keys, [name]: item[name], [LIST_ENTRY_ATTRIBUTE]: item[LIST_ENTRY_ATTRIBUTE] }),
  );
  const all = indexes.map(() => base);
  const statusKey = LIST_INDEXES.status.partitionKey;
  const statusEntry = units({
    ...keys,
    [statusKey]: item[statusKey],
    [LIST_ENTRY_ATTRIBUTE]: item[LIST_ENTRY_ATTRIBUTE],
  });
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  return {
    label,
    itemBytes: itemSize(marshall(item, { removeUndefinedValues: true })),
    indexes: indexes.length,
    includeEntryBytes: itemSize(
      marshall({
        ...keys,
        [INDEX_KEYS[1] as string]: item[INDEX_KEYS[1] as string],
        [LIST_ENTRY_ATTRIBUTE]: item[LIST_ENTRY_ATTRIBUTE],
      }),
    ),
    // Creation: the table item and one entry per index it belongs to.
    createInclude: base + sum(include),
    createAll: base + sum(all),
    // Each status change rewrites the table item; with ALL each list index entry too, with INCLUDE
    // only the status index's entry, which moves partition (a delete and a put).
    lifecycleInclude: base + sum(include) + STATUS_UPDATES * (base + 2 * statusEntry),
    lifecycleAll: base + sum(all) + STATUS_UPDATES * (base + sum(all)),
  };
};

export interface ListBenchReport {
  loadSeconds: { small: number; large: number };
  stored: { small: number; large: number };
  firstPage: { small: PageFigures; large: PageFigures };
  nextPage: { small: PageFigures; large: PageFigures };
  counts: Awaited<ReturnType<typeof measureCounts>>;
  projectionReads: ProjectionReads[];
  writes: ReturnType<typeof writeCosts>[];
  references: { small: ReferenceReads[]; large: ReferenceReads[] };
}

/**
 * One page (limit 100, by debtor account) with 1,000 and with `largeCount` stored transfers,
 * loaded straight into the service's dynalite; then the cost of Pagination-Total and of the
 * two index projections.
 */
export const benchListCreditTransfers = async (
  service: LocalService,
  api: BenchClient,
  options: { largeCount?: number; runs?: number } = {},
): Promise<ListBenchReport> => {
  const largeCount = options.largeCount ?? 100_000;
  const runs = options.runs ?? 30;
  const client = createDocumentClient(undefined, service.tableSocket);
  const start = Date.now();

  const measured = Array.from({ length: MEASURED_TRANSFERS }, (_, index) =>
    toCreditTransferItem(
      recordOf(
        TENANT,
        start - index * 60_000,
        fullCreditTransfer({ debtorAccountId: MEASURED_ACCOUNT }) as CreditTransferRequest,
      ),
    ),
  );
  const countAccounts = COUNT_SIZES.flatMap((size) =>
    Array.from({ length: size }, (_, index) =>
      toCreditTransferItem(
        recordOf(
          TENANT,
          start - index * 1000,
          minimalCreditTransfer({ debtorAccountId: `bench-count-${size}` }) as CreditTransferRequest,
        ),
      ),
    ),
  );

  let began = performance.now();
  await load(client, TABLE, [
    ...measured,
    ...referencedTransfers(start),
    ...batchItems(TENANT, TENANT_BATCHES, start),
    ...background(1_000 - MEASURED_TRANSFERS - REFERENCED_TRANSFERS, 0),
  ]);
  const smallSeconds = (performance.now() - began) / 1000;
  const smallReferences = await measureReferences(service.tableSocket);
  // Warm-up: the first requests pay for module loading and JIT, not for the table.
  await measurePage(service.tableSocket, api, { withCursor: false, runs });
  await measurePage(service.tableSocket, api, { withCursor: true, runs });
  const smallFirst = await measurePage(service.tableSocket, api, { withCursor: false, runs });
  const smallNext = await measurePage(service.tableSocket, api, { withCursor: true, runs });

  began = performance.now();
  const rest = largeCount - 1_000 - countAccounts.length;
  await load(client, TABLE, [
    ...countAccounts,
    ...background(Math.max(0, rest), 1_000),
    // The tenant's older batches, and other tenants' batches, grow with the table.
    ...batchItems(TENANT, Math.floor(largeCount / 100), start - TENANT_BATCHES * 1000),
    ...Array.from({ length: 5 }, (_, n) =>
      batchItems(`bench-${n}`, Math.floor(largeCount / 100), start),
    ).flat(),
  ]);
  const largeSeconds = (performance.now() - began) / 1000;
  const largeReferences = await measureReferences(service.tableSocket);
  const largeFirst = await measurePage(service.tableSocket, api, { withCursor: false, runs });
  const largeNext = await measurePage(service.tableSocket, api, { withCursor: true, runs });

  return {
    loadSeconds: { small: smallSeconds, large: largeSeconds },
    references: { small: smallReferences, large: largeReferences },
    stored: { small: 1_000, large: largeCount },
    firstPage: { small: smallFirst, large: largeFirst },
    nextPage: { small: smallNext, large: largeNext },
    counts: await measureCounts(service.tableSocket),
    projectionReads: [
      await measureProjections(
        service.tableSocket,
        'minimal transfers',
        'bench-count-1000',
        countAccounts.filter(
          (item) =>
            item[LIST_INDEXES.debtorAccountId.partitionKey] ===
            listDebtorAccountIdKey(TENANT, 'bench-count-1000'),
        ),
      ),
      await measureProjections(service.tableSocket, 'every field', MEASURED_ACCOUNT, measured),
    ],
    writes: [
      writeCosts(
        'minimal transfer',
        toCreditTransferItem(recordOf(TENANT, start, minimalCreditTransfer() as CreditTransferRequest)),
      ),
      writeCosts('every field', measured[0] ?? {}),
    ],
  };
};

const pageLine = (label: string, figures: PageFigures) =>
  `${label.padEnd(34)} p50 ${fixed(figures.p50Ms).padStart(6)} ms  p95 ${fixed(figures.p95Ms).padStart(6)} ms  ` +
  `RCU: query ${figures.queryUnits} + BatchGet ${figures.batchGetUnits} + count ${figures.countUnits} = ${
    figures.queryUnits + figures.batchGetUnits + figures.countUnits
  }`;

const units = (figures: PageFigures) => figures.queryUnits + figures.batchGetUnits + figures.countUnits;

export const formatListBenchReport = (report: ListBenchReport): string[] => {
  const { small, large } = report.stored;
  const lines = [
    `\n## List: one page (limit ${PAGE}, debtorAccountId.eq, ${MEASURED_TRANSFERS} matching full transfers)`,
    `loaded ${small} transfers in ${fixed(report.loadSeconds.small)} s, then up to ${large} in ${fixed(report.loadSeconds.large)} s more (BatchWriteItem, 16 in flight)`,
    pageLine(`${small} stored, first page`, report.firstPage.small),
    pageLine(`${large} stored, first page`, report.firstPage.large),
    pageLine(`${small} stored, next page (cursor)`, report.nextPage.small),
    pageLine(`${large} stored, next page (cursor)`, report.nextPage.large),
    `ratio ${large}/${small}, next page: latency p50 ${fixed(report.nextPage.large.p50Ms / report.nextPage.small.p50Ms, 2)}, read units ${fixed(units(report.nextPage.large) / units(report.nextPage.small), 2)}  (target <= 1.2)`,
    `ratio ${large}/${small}, first page: latency p50 ${fixed(report.firstPage.large.p50Ms / report.firstPage.small.p50Ms, 2)}, read units ${fixed(units(report.firstPage.large) / units(report.firstPage.small), 2)}  (target <= 1.2)`,
  ];
  lines.push(
    `\n## List by reference, and the list of batches: one page (limit ${PAGE}, first page, no Pagination-Total), ${small} vs ${large} stored`,
  );
  report.references.small.forEach((row, index) => {
    const larger = report.references.large[index];
    const line = (figures: ReferenceReads) =>
      `index entries ${String(figures.indexEntries).padStart(4)}, items ${String(figures.items).padStart(4)}, ${fixed(figures.readUnits).padStart(6)} RCU`;
    lines.push(`${row.label.padEnd(42)} ${small}: ${line(row)}   ${large}: ${larger ? line(larger) : '-'}`);
  });
  lines.push('\n## List: cost of Pagination-Total (first page only; later pages carry it in the cursor)');
  for (const row of report.counts) {
    lines.push(
      `${String(row.matching).padStart(6)} matching${row.refined ? ', + amount.gte (read and matched here)' : ', COUNT query                        '}  total ${String(row.total).padStart(6)}  count ${String(row.countUnits).padStart(6)} RCU  first page ${fixed(row.pageMs).padStart(7)} ms`,
    );
  }
  lines.push(
    '\n## List indexes: INCLUDE (filter fields) vs ALL projection',
    ...report.projectionReads.map(
      (row) =>
        `page of ${PAGE} ${row.label.padEnd(17)} reads: INCLUDE query ${row.includeQuery} + BatchGet ${row.includeBatchGet} = ${row.includeQuery + row.includeBatchGet} RCU; ALL query ${row.allQuery} RCU (measured)`,
    ),
    'writes (computed from item sizes: dynalite does not report index writes; 1 WCU per started KB per item or index entry):',
  );
  for (const row of report.writes) {
    lines.push(
      `${row.label.padEnd(17)} item ${String(row.itemBytes).padStart(5)} B, INCLUDE entry ~${row.includeEntryBytes} B, in ${row.indexes} list indexes: ` +
        `create ${row.createInclude} WCU (INCLUDE) vs ${row.createAll} (ALL); with ${STATUS_UPDATES} status changes ${row.lifecycleInclude} vs ${row.lifecycleAll}`,
    );
  }
  return lines;
};
