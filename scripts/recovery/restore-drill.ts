import { isDeepStrictEqual } from 'node:util';
import { creditTransferKey } from '#adapters/table/keys';
import { RECOVERY_INDEX, TABLE_DEFINITION } from '#adapters/table/table-definition';
import { type CreditTransferStatus, FINAL_STATUSES } from '#domain/credit-transfers/credit-transfer-status';

/**
 * The restore drill (`npm run table:restore-drill`, docs/operations.md "Restore drill"): restore
 * the newest recovery point of a stage into a scratch table, compare it with the live table, and
 * delete the scratch table whatever happened. What AWS Backup does is a port (RecoveryPoints), so
 * the comparison and the safety checks run the same against a stage and against local tables.
 */

export type Item = Record<string, unknown>;
export interface TableKey {
  readonly pk: string;
  readonly sk: string;
}

export interface RecoveryPoint {
  readonly id: string;
  readonly createdAt: Date;
  /** The table the recovery point was taken of. */
  readonly sourceTable: string;
}

/** What AWS Backup does for the drill. */
export interface RecoveryPoints {
  /** The newest completed recovery point of the table. */
  latest(): Promise<RecoveryPoint>;
  /** Restores the point into a new table of this name; resolves once the table can be read. */
  restore(point: RecoveryPoint, targetTable: string): Promise<void>;
}

/** Reads of the two tables, and the deletion of the scratch one. */
export interface DrillTables {
  exists(table: string): Promise<boolean>;
  /** Every item, strongly consistent. */
  scan(table: string): AsyncIterable<Item>;
  get(table: string, key: TableKey): Promise<Item | undefined>;
  /** Deletes the table; a table that is not there is no error. */
  delete(table: string): Promise<void>;
}

export interface DrillOptions {
  /** Default: `<live table>-drill-<epoch ms>`. */
  readonly scratchTable?: string;
  /** The live table; default: the table the recovery point was taken of. */
  readonly liveTable?: string;
  /** Payments compared field by field. */
  readonly sampleSize: number;
  /**
   * Counts must match exactly: the live table has not moved since the recovery point (a local
   * drill). Otherwise the live table may hold more (written since), never fewer.
   */
  readonly exact: boolean;
  readonly now?: () => number;
  readonly random?: () => number;
}

export interface KindCount {
  readonly kind: string;
  readonly restored: number;
  readonly live: number;
}

export interface DrillReport {
  readonly recoveryPoint: RecoveryPoint;
  readonly liveTable: string;
  readonly scratchTable: string;
  /** From the restore's start until the scratch table could be read: the restore part of the RTO. */
  readonly restoreSeconds: number;
  readonly counts: readonly KindCount[];
  readonly sampled: number;
  /** Each a reason the drill failed; none when it passed. */
  readonly problems: readonly string[];
}

/** The drill ran and found the restored table differs from the live one. */
export class RestoreDrillFailedError extends Error {
  override name = 'RestoreDrillFailedError';
  constructor(readonly report: DrillReport) {
    super(`Restore drill failed: ${report.problems.join('; ')}`);
  }
}

/** A scratch table name the drill must not use: it deletes its scratch table at the end. */
export class UnsafeScratchTableError extends Error {
  override name = 'UnsafeScratchTableError';
}

const PAYMENT_SORT_KEY = creditTransferKey('tenant', 'payment').sk;
const { partitionKey, sortKey, timeToLiveAttribute } = TABLE_DEFINITION;

/** The kind of an item: its partition key's prefix (each kind has its own), so no tenant or id makes a kind. */
export const kindOf = (item: Item): string => String(item[partitionKey]).split('#')[0] ?? '';

const isPayment = (item: Item): boolean => item[sortKey] === PAYMENT_SORT_KEY;
/**
 * Final, and done with: the lifecycle's last write (its events published) takes the transfer off
 * the recovery index, and nothing writes to it after that.
 */
const isSettled = (item: Item): boolean =>
  FINAL_STATUSES.has(item.status as CreditTransferStatus) && item[RECOVERY_INDEX.partitionKey] === undefined;

/**
 * Compares a restored table with the live one: item counts by kind (items that expire, such as
 * throttle counters, left out) and a sample of payments field by field. Against a live table that
 * has moved on, only settled payments are sampled (nothing changes them) and the live table may
 * hold more items of a kind, never fewer: every kind the table keeps is kept for good.
 */
export const compareTables = async (
  tables: DrillTables,
  {
    restored,
    live,
    sampleSize,
    exact,
    random = Math.random,
  }: {
    restored: string;
    live: string;
    sampleSize: number;
    exact: boolean;
    random?: () => number;
  },
): Promise<{ counts: KindCount[]; sampled: number; problems: string[] }> => {
  const restoredCounts = new Map<string, number>();
  const sample: Item[] = [];
  let candidates = 0;
  for await (const item of tables.scan(restored)) {
    if (item[timeToLiveAttribute] !== undefined) continue;
    restoredCounts.set(kindOf(item), (restoredCounts.get(kindOf(item)) ?? 0) + 1);
    if (!isPayment(item) || (!exact && !isSettled(item))) continue;
    // Reservoir sampling: every candidate equally likely, in one pass.
    candidates += 1;
    if (sample.length < sampleSize) sample.push(item);
    else {
      const slot = Math.floor(random() * candidates);
      if (slot < sampleSize) sample[slot] = item;
    }
  }
  const liveCounts = new Map<string, number>();
  for await (const item of tables.scan(live)) {
    if (item[timeToLiveAttribute] !== undefined) continue;
    liveCounts.set(kindOf(item), (liveCounts.get(kindOf(item)) ?? 0) + 1);
  }

  const problems: string[] = [];
  const kinds = [...new Set([...restoredCounts.keys(), ...liveCounts.keys()])].sort();
  const counts = kinds.map((kind) => ({
    kind,
    restored: restoredCounts.get(kind) ?? 0,
    live: liveCounts.get(kind) ?? 0,
  }));
  for (const { kind, restored: inRestored, live: inLive } of counts) {
    if (exact ? inRestored !== inLive : inRestored > inLive) {
      problems.push(`${kind}: ${inRestored} items restored, ${inLive} live`);
    }
  }
  if (restoredCounts.size === 0 && liveCounts.size > 0) problems.push('the restored table is empty');

  for (const payment of sample) {
    const key = { pk: String(payment[partitionKey]), sk: String(payment[sortKey]) };
    const current = await tables.get(live, key);
    if (current === undefined) {
      problems.push(`payment ${key.pk} is restored but not live`);
      continue;
    }
    // Field names only: the values are payment data.
    const fields = [...new Set([...Object.keys(payment), ...Object.keys(current)])].sort();
    const differing = fields.filter((field) => !isDeepStrictEqual(payment[field], current[field]));
    if (differing.length > 0) problems.push(`payment ${key.pk} differs in ${differing.join(', ')}`);
  }
  return { counts, sampled: sample.length, problems };
};

/**
 * Restores the newest recovery point into `scratchTable`, compares it with the live table and
 * deletes the scratch table, on failure too. Refuses a scratch table that is the live table or
 * that exists already: the drill deletes only a table it made.
 */
export const runRestoreDrill = async (
  points: RecoveryPoints,
  tables: DrillTables,
  options: DrillOptions,
): Promise<DrillReport> => {
  const now = options.now ?? Date.now;
  const point = await points.latest();
  const liveTable = options.liveTable ?? point.sourceTable;
  const scratchTable = options.scratchTable ?? `${liveTable}-drill-${now()}`;
  if (scratchTable === liveTable || scratchTable === point.sourceTable) {
    throw new UnsafeScratchTableError(
      `The scratch table ${scratchTable} is the live table: the drill deletes its scratch table`,
    );
  }
  if (await tables.exists(scratchTable)) {
    throw new UnsafeScratchTableError(
      `A table ${scratchTable} exists already: the drill restores into a new table and deletes it after`,
    );
  }
  const started = now();
  try {
    await points.restore(point, scratchTable);
    const restoreSeconds = (now() - started) / 1000;
    const compared = await compareTables(tables, {
      restored: scratchTable,
      live: liveTable,
      sampleSize: options.sampleSize,
      exact: options.exact,
      ...(options.random && { random: options.random }),
    });
    const report: DrillReport = {
      recoveryPoint: point,
      liveTable,
      scratchTable,
      restoreSeconds,
      ...compared,
    };
    if (report.problems.length > 0) throw new RestoreDrillFailedError(report);
    return report;
  } finally {
    await tables.delete(scratchTable);
  }
};
