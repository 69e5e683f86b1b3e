import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import {
  DynamoDbCreditTransferList,
  MAX_COUNTED_ENTRIES,
} from '#adapters/credit-transfers/credit-transfer-list';
import { toCreditTransferItem } from '#adapters/credit-transfers/credit-transfer-store';
import type { CreditTransferRequest } from '#domain/credit-transfers/credit-transfer';
import type { ListFilters } from '#domain/credit-transfers/list-filters';
import type { LocalService } from '#local/service-process';
import { minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { type BenchClient, fixed, runConcurrently } from './support.ts';

/**
 * The first list page of one tenant, with its Pagination-Total, as the tenant's stored transfers
 * grow to 100k and 1M: seeded straight into the table with the store's own item mapping
 * (BatchWriteItem, 25 a batch, 16 in flight, generated batch by batch so memory stays flat).
 */

const TABLE = 'credit-transfers';
/** The tenant of the local client the HTTP requests run as. */
const TENANT = 'local';
const PAGE = 100;

const item = (n: number, now: number) => {
  const date = new Date(now - n * 1000).toISOString();
  return toCreditTransferItem({
    tenant: TENANT,
    paymentId: randomUUID(),
    clientId: 'bench',
    createdAt: date,
    // One in ten rejected: what status.eq=Rejected finds through the status index.
    status: n % 10 === 0 ? 'Rejected' : 'AcceptedSettlementCompleted',
    statusDate: date,
    requestHash: 'f'.repeat(64),
    servicer: {},
    transfer: minimalCreditTransfer({
      debtorAccountId: `scale-acc-${n % 100}`,
      amount: `${(n % 10_000) + 1}.${String(n % 100).padStart(2, '0')}`,
    }) as CreditTransferRequest,
    history: [{ status: 'Received', date, actor: 'bench' }],
  });
};

/**
 * Stores transfers number `from` to `to` - 1 of the tenant, stopping early at `deadline`
 * (performance.now() ms); returns how many are stored in all and the seconds it took.
 */
const seed = async (client: DocumentClient, from: number, to: number, now: number, deadline: number) => {
  const began = performance.now();
  const batches = Math.ceil((to - from) / 25);
  let stored = from;
  await runConcurrently({ requests: batches, concurrency: 16 }, async (batch) => {
    if (performance.now() > deadline) return;
    const first = from + batch * 25;
    let requests = Array.from({ length: Math.min(25, to - first) }, (_, index) => ({
      PutRequest: { Item: item(first + index, now) },
    }));
    while (requests.length > 0) {
      const result = await client.batchWrite({ RequestItems: { [TABLE]: requests } });
      requests = (result.UnprocessedItems?.[TABLE] ?? []) as typeof requests;
    }
    stored = Math.max(stored, Math.min(to, first + 25));
  });
  return { stored, seconds: (performance.now() - began) / 1000 };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export interface ScaleRow {
  /** The size aimed at, and the transfers actually stored when the seeding budget allowed fewer. */
  target: number;
  stored: number;
  seedSeconds: number;
  /** Whole-stack first page (limit 100, no filter), median of runs, and its Pagination-Total. */
  firstPageMs: number;
  total: string;
  /** The same with a filter matched in the function (amount.gte): the count reads the entries. */
  refinedPageMs: number;
  refinedTotal: string;
  /** The count read units of the bounded first page (adapter, same query). */
  countUnits: number;
  /** First page of status.eq=Rejected (one transfer in ten), over HTTP, and its Pagination-Total. */
  statusPageMs: number;
  statusTotal: string;
  /** Read units of a whole first page (query, BatchGet, count) through the adapter: no filter, and status.eq. */
  pageUnits: number;
  statusPageUnits: number;
  /** The unbounded count (every entry), timed through the adapter; undefined when not measured. */
  unboundedCountMs?: number;
  unboundedCountUnits?: number;
}

export const benchListAtScale = async (
  service: LocalService,
  api: BenchClient,
  options: { sizes: number[]; runs?: number; unboundedUpTo?: number; seedBudgetSeconds?: number },
): Promise<ScaleRow[]> => {
  const client = createDocumentClient(undefined, service.tableSocket);
  const runs = options.runs ?? 5;
  const now = Date.now();
  const rows: ScaleRow[] = [];
  let stored = 0;
  const timedPage = async (path: string) => {
    const times: number[] = [];
    let total = '';
    for (let run = 0; run < runs; run++) {
      const begin = performance.now();
      const reply = await api.get(path);
      times.push(performance.now() - begin);
      if (reply.status !== 200) throw new Error(`list answered ${reply.status}: ${reply.text.slice(0, 200)}`);
      total = String(reply.headers['pagination-total']);
    }
    return { ms: median(times), total };
  };
  const deadline = performance.now() + (options.seedBudgetSeconds ?? 1200) * 1000;
  for (const size of options.sizes) {
    console.log(`seeding ${size - stored} transfers (to ${size}) ...`);
    const seeded = await seed(client, stored, size, now, deadline);
    const seedSeconds = seeded.seconds;
    stored = seeded.stored;
    // Warm-up: module loading and JIT, not the table.
    await api.get(`/v1/payments/credit-transfers?limit=${PAGE}`);
    const first = await timedPage(`/v1/payments/credit-transfers?limit=${PAGE}`);
    const refined = await timedPage(`/v1/payments/credit-transfers?limit=${PAGE}&amount.gte=5000`);
    const byStatus = await timedPage(`/v1/payments/credit-transfers?limit=${PAGE}&status.eq=Rejected`);
    const unitsOf = async (filters: ListFilters) => {
      let units = 0;
      const list = new DynamoDbCreditTransferList(client, TABLE, {
        onCapacity: (_operation, capacity) => {
          units += capacity;
        },
      });
      await list.page({ tenant: TENANT, filters, limit: PAGE, withTotal: true });
      return units;
    };
    let countUnits = 0;
    const bounded = new DynamoDbCreditTransferList(client, TABLE, {
      onCapacity: (operation, units) => {
        if (operation === 'listCount') countUnits += units;
      },
    });
    await bounded.page({ tenant: TENANT, filters: {}, limit: PAGE, withTotal: true });
    const row: ScaleRow = {
      target: size,
      stored,
      seedSeconds,
      firstPageMs: first.ms,
      total: first.total,
      refinedPageMs: refined.ms,
      refinedTotal: refined.total,
      countUnits,
      statusPageMs: byStatus.ms,
      statusTotal: byStatus.total,
      pageUnits: await unitsOf({}),
      statusPageUnits: await unitsOf({ 'status.eq': 'Rejected' }),
    };
    if (stored <= (options.unboundedUpTo ?? 0)) {
      let units = 0;
      const unbounded = new DynamoDbCreditTransferList(client, TABLE, {
        // As high as LevelDB's iterator limit (a 32-bit integer) takes.
        maxCounted: 2_000_000_000,
        onCapacity: (operation, capacity) => {
          if (operation === 'listCount') units += capacity;
        },
      });
      const begin = performance.now();
      await unbounded.page({ tenant: TENANT, filters: {}, limit: PAGE, withTotal: true });
      row.unboundedCountMs = performance.now() - begin;
      row.unboundedCountUnits = units;
    }
    console.log(
      `${stored} of ${size} stored (seeded in ${fixed(seedSeconds)} s): first page ${fixed(row.firstPageMs)} ms, total ${row.total}; ` +
        `amount.gte ${fixed(row.refinedPageMs)} ms, total ${row.refinedTotal}; ` +
        `status.eq ${fixed(row.statusPageMs)} ms, total ${row.statusTotal}, ${fixed(row.statusPageUnits)} RCU (no filter ${fixed(row.pageUnits)})` +
        (row.unboundedCountMs === undefined ? '' : `; unbounded count ${fixed(row.unboundedCountMs)} ms`),
    );
    rows.push(row);
  }
  return rows;
};

export { MAX_COUNTED_ENTRIES };
