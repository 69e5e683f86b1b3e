import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type CreditTransfersClient, isFinal } from './client.ts';
import { StateFileError } from './errors.ts';
import { acquireLock, type HeldLock, writeFileAtomically } from './files.ts';
import type { CreditTransfer, PaymentStatus } from './types.ts';

/** What the polling job last reported for one transfer. */
interface KnownTransfer {
  status: PaymentStatus;
  statusReason?: string;
  statusReasonCode?: string;
  date: string;
  etag?: string;
}

interface PollState {
  version: 1;
  /** The API and client this state belongs to: another one's state would report nonsense. */
  owner: { apiUrl: string; clientId: string };
  transfers: Record<string, KnownTransfer>;
}

/** One status change, reported once. `changeId` is the same whenever the same change is reported. */
export interface StatusChange {
  changeId: string;
  paymentId: string;
  previousStatus: PaymentStatus | null;
  status: PaymentStatus;
  statusReason: string | null;
  /** The reason's ISO 20022 code (e.g. AM04), beside its name. */
  statusReasonCode: string | null;
  date: string;
}

export const CHANGE_FIELDS: readonly (keyof StatusChange)[] = [
  'changeId',
  'paymentId',
  'previousStatus',
  'status',
  'statusReason',
  'statusReasonCode',
  'date',
];

export interface StuckTransfer {
  paymentId: string;
  status: PaymentStatus;
  date: string;
}

/** A transfer not final whose status is older than this is reported stuck, unless told otherwise. */
export const DEFAULT_STUCK_AFTER_MS = 24 * 3_600_000;

export interface PollOptions {
  client: CreditTransfersClient;
  statePath: string;
  owner: { apiUrl: string; clientId: string };
  /** Default DEFAULT_STUCK_AFTER_MS (24 h). */
  stuckAfterMs?: number | undefined;
  report: (change: StatusChange) => void;
  /** Discovery stops after this many transfers in a row it already knew (default 20). */
  knownOverlap?: number | undefined;
  now?: (() => number) | undefined;
}

export interface PollResult {
  changes: number;
  stuck: StuckTransfer[];
  errors: string[];
}

/** Changes reported between two saves of the state; after a kill at most these are reported again. */
const SAVE_EVERY = 25;

const readState = async (path: string, owner: PollState['owner']): Promise<PollState> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, owner, transfers: {} };
    throw error;
  }
  let state: PollState;
  try {
    state = JSON.parse(text) as PollState;
  } catch {
    throw new StateFileError(`The state file ${path} is not valid JSON; it was not written by this job`);
  }
  if (state.version !== 1 || typeof state.transfers !== 'object' || state.transfers === null) {
    throw new StateFileError(`The state file ${path} is not a polling state (version 1)`);
  }
  if (state.owner?.apiUrl !== owner.apiUrl || state.owner?.clientId !== owner.clientId) {
    throw new StateFileError(
      `The state file ${path} belongs to client ${state.owner?.clientId} at ${state.owner?.apiUrl}, not ${owner.clientId} at ${owner.apiUrl}`,
    );
  }
  return state;
};

const changeId = (paymentId: string, status: string, date: string) =>
  createHash('sha256').update(`${paymentId}\n${status}\n${date}`).digest('base64url').slice(0, 22);

const known = (report: CreditTransfer): KnownTransfer => ({
  status: report.status,
  ...(report.statusReason !== undefined && { statusReason: report.statusReason }),
  ...(report.statusReasonCode !== undefined && { statusReasonCode: report.statusReasonCode }),
  date: report.date,
});

/**
 * One run of the scheduled polling job.
 *
 * 1. Discovery: lists the client's transfers newest first and takes every one the state does not
 *    know, stopping after `knownOverlap` known ones in a row (a few known ones are read again so a
 *    transfer whose list entry arrived late is still found).
 * 2. Polling: asks the status of every known transfer that is not final, with `If-None-Match`.
 * 3. Each change is reported first and recorded second (state written atomically every few
 *    changes and at the end): a kill can never lose a change; it can only make the next run report
 *    again the changes since the last save, with the same `changeId`, so consumers drop repeats.
 * 4. Transfers not final whose current status is older than `stuckAfterMs` are returned as stuck.
 */
export const pollOnce = async (options: PollOptions): Promise<PollResult> => {
  const lock = await acquireLock(options.statePath);
  try {
    return await runLocked(options, lock);
  } finally {
    await lock.release();
  }
};

const runLocked = async (options: PollOptions, lock: HeldLock): Promise<PollResult> => {
  const { client, statePath } = options;
  const now = options.now ?? Date.now;
  const state = await readState(statePath, options.owner);
  const errors: string[] = [];
  let unsaved = 0;
  let changes = 0;
  const save = () => {
    // A run that lost its lock may be overtaken by another one: it must not write over its state.
    lock.assertHeld();
    return writeFileAtomically(statePath, `${JSON.stringify(state)}\n`);
  };

  const record = async (paymentId: string, next: KnownTransfer, previous: KnownTransfer | undefined) => {
    const changed =
      previous === undefined ||
      previous.status !== next.status ||
      previous.statusReason !== next.statusReason ||
      previous.date !== next.date;
    if (changed) {
      options.report({
        changeId: changeId(paymentId, next.status, next.date),
        paymentId,
        previousStatus: previous?.status ?? null,
        status: next.status,
        statusReason: next.statusReason ?? null,
        statusReasonCode: next.statusReasonCode ?? null,
        date: next.date,
      });
      changes++;
      unsaved++;
    }
    state.transfers[paymentId] = next;
    if (unsaved >= SAVE_EVERY) {
      await save();
      unsaved = 0;
    }
  };

  // 1. Discovery, newest first; reported oldest first, as they happened.
  const discovered: CreditTransfer[] = [];
  const overlap = options.knownOverlap ?? 20;
  let knownInARow = 0;
  for await (const transfer of client.list({}, { limit: 100 })) {
    if (state.transfers[transfer.paymentId] === undefined) {
      knownInARow = 0;
      discovered.push(transfer);
    } else if (++knownInARow >= overlap) break;
  }
  for (const transfer of discovered.reverse()) await record(transfer.paymentId, known(transfer), undefined);
  const fresh = new Set(discovered.map((transfer) => transfer.paymentId));

  // 2. Polling what is not final (the ones just discovered are as fresh as they get).
  for (const [paymentId, previous] of Object.entries(state.transfers)) {
    if (isFinal(previous.status) || fresh.has(paymentId)) continue;
    try {
      const result = await client.status(paymentId, {
        ...(previous.etag !== undefined && { ifNoneMatch: previous.etag }),
      });
      if (!result.modified || result.report === undefined) continue;
      await record(
        paymentId,
        { ...known(result.report), ...(result.etag !== undefined && { etag: result.etag }) },
        previous,
      );
    } catch (error) {
      errors.push(`${paymentId}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  await save();

  // 3. Stuck: not final, and the current status is older than allowed.
  const stuck: StuckTransfer[] = [];
  for (const [paymentId, transfer] of Object.entries(state.transfers)) {
    if (isFinal(transfer.status)) continue;
    if (now() - Date.parse(transfer.date) > (options.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS))
      stuck.push({ paymentId, status: transfer.status, date: transfer.date });
  }
  return { changes, stuck, errors };
};
