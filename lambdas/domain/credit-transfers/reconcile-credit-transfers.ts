import { randomUUID } from 'node:crypto';
import type { Clock } from '../commons/ports.ts';
import { isExpired } from '../payment-controls/approval.ts';
import { owesLimitRelease, reserveLimits } from '../payment-controls/count-limits.ts';
import { settlePending } from '../payment-controls/decide-approval.ts';
import type { LimitCounters } from '../payment-controls/ports.ts';
import { isFinal, STALL_SECONDS, secondsAfter } from './lifecycle.ts';
import { type LifecycleSettings, pollBudgetSeconds } from './lifecycle-settings.ts';
import { executionsWithoutProgress, NO_PROGRESS, parkCreditTransfer } from './parked-transfers.ts';
import type {
  CreditTransferRecord,
  LifecycleStore,
  OperationsEventPublisher,
  PendingAnnouncer,
  Rail,
  RecoveryCandidate,
  RecoveryQueue,
  WorkflowStarter,
} from './ports.ts';

/**
 * The reconciler: every transfer that is not final, or whose changes are not all published, sits
 * in the recovery index under the time it should have progressed by. Past that time (a crash
 * between the write and the start, a failed execution, a lost process) it starts a new workflow
 * execution for it; the steps are idempotent, so the execution carries on from where it stands.
 * A transfer in settlement whose workflow handed over is only started again once clearing reports
 * its outcome: asking clearing costs no state transition.
 */
export interface ReconcileDependencies {
  queue: RecoveryQueue;
  store: LifecycleStore;
  rail: Rail;
  workflow: WorkflowStarter;
  /** Publishes the change to Pending of a held transfer whose announcement was lost (no workflow runs for it). */
  announcer: PendingAnnouncer;
  clock: Clock;
  settings: LifecycleSettings;
  /** Where a parking is announced. */
  events: OperationsEventPublisher;
  /** The limit counters: a transfer its initiation left half counted is counted here. */
  counters?: LimitCounters;
}

export interface ReconcileOptions {
  /**
   * Every transfer in the index, due or not: right after a local restart nothing is running,
   * so everything unfinished needs driving.
   */
  everything?: boolean;
  /** Most transfers handled in one run; the rest waits for the next run. */
  limit?: number;
}

export interface ReconcileReport {
  /** Transfers whose record and recovery entry disagreed, made to agree (`everything` runs only). */
  repaired: number;
  /** Transfers found due. */
  found: number;
  /** Executions started. */
  started: number;
  /** In settlement, clearing still pending: looked at again later. */
  deferred: number;
  /** Moved on by someone else meanwhile, or already done. */
  skipped: number;
  /** An execution for it still waiting its turn or running, where the starter can tell: left to it. */
  driven: number;
  failed: number;
  /** Parked in this run: they had their last attempt without moving on. */
  parked: number;
  /** Parked transfers in all, waiting for an operator (this run's included). */
  parkedInAll: number;
  /** Of those found, the ones not final and past their due time: the workflow lost them for a while. */
  stuck: number;
  /**
   * Left due, untouched, because the rail answers nothing at all (its probe failed): no execution
   * started, no attempt counted, nothing parked. The next run probes again.
   */
  paused: number;
  /** Whether the rail answered this run's probe (no probe when nothing needed the rail). */
  railAvailable?: boolean;
}

/** Longest wait between two looks at a transfer clearing takes long over. */
const MAX_RECHECK_SECONDS = 3600;
const CONCURRENCY = 16;

/**
 * Whether the rail answers at all: a status inquiry of a payment no one made, which a working
 * rail answers (`unknown`) and an unreachable one does not. One call a run, for every transfer.
 */
const railAnswers = async (rail: Rail): Promise<boolean> => {
  try {
    await rail.clearingStatus({
      tenant: 'rail-probe',
      paymentId: randomUUID(),
      clientId: 'reconciler',
      transfer: { paymentMethod: 'CreditTransfer', amount: '0.00', debtorAccountId: 'rail-probe' },
    });
    return true;
  } catch {
    return false;
  }
};

const submittedAt = (record: CreditTransferRecord): number | undefined => {
  const entry = record.history.find((change) => change.status === 'AcceptedSettlementInProcess');
  return entry === undefined ? undefined : Date.parse(entry.date);
};

/** The longer clearing has taken, the longer the next wait (doubling), within bounds. */
const recheckSeconds = (record: CreditTransferRecord, now: Date, settings: LifecycleSettings): number => {
  const since = submittedAt(record);
  const elapsed = since === undefined ? 0 : Math.floor((now.getTime() - since) / 1000);
  return Math.min(MAX_RECHECK_SECONDS, Math.max(settings.pollMaxIntervalSeconds, elapsed));
};

export const reconcileCreditTransfers = async (
  deps: ReconcileDependencies,
  options: ReconcileOptions = {},
): Promise<ReconcileReport> => {
  const now = deps.clock.now();
  // After a crash the index may have kept half of a write: made whole before it is read.
  const repaired = options.everything ? await deps.queue.realign(now) : 0;
  const candidates = await deps.queue.due(options.everything ? undefined : now, options.limit ?? 1000);
  const report: ReconcileReport = {
    repaired,
    found: candidates.length,
    started: 0,
    deferred: 0,
    skipped: 0,
    driven: 0,
    failed: 0,
    parked: 0,
    parkedInAll: 0,
    stuck: 0,
    paused: 0,
  };
  // Asked once, before any transfer: when the rail answers nothing, every transfer would fail the
  // same way, and counting that against each would park them all for an outage.
  let railAvailable: Promise<boolean> | undefined;
  const railIsAvailable = () => {
    railAvailable ??= railAnswers(deps.rail).then((available) => {
      report.railAvailable = available;
      return available;
    });
    return railAvailable;
  };

  const handle = async (
    candidate: RecoveryCandidate,
  ): Promise<
    keyof Omit<ReconcileReport, 'found' | 'repaired' | 'stuck' | 'parkedInAll' | 'railAvailable'>
  > => {
    // Neither read nor claimed: a claim would count an attempt the transfer never had.
    if (deps.workflow.isDriving?.(candidate)) return 'driven';
    const record = await deps.store.get(candidate.tenant, candidate.paymentId);
    if (record === undefined) return 'skipped';
    if (record.limits?.state === 'reserving') {
      // Its initiation stopped while counting it against its limits: counted here, which starts
      // it, holds it for approval or rejects it, as the limits say.
      if (deps.counters === undefined)
        throw new Error('A transfer waits to be counted and no limit counters were given');
      if ((await deps.queue.claim(candidate, secondsAfter(now, STALL_SECONDS))) === undefined)
        return 'skipped';
      await reserveLimits(
        {
          store: deps.store,
          counters: deps.counters,
          clock: deps.clock,
          workflow: deps.workflow,
          announcer: deps.announcer,
        },
        record,
      );
      return 'started';
    }
    if (record.status === 'Pending' && record.approval !== undefined) {
      // Waiting for approval, no workflow: settle it (approved, rejected, cancelled or expired
      // while no request finished the job), or look again when it expires.
      const settled = await settlePending(deps, record);
      if (settled.status !== 'Pending') return 'started';
      if (isExpired(record.approval, now)) return 'skipped';
      // Its change to Pending not published yet (the initiation's announcement was lost): announced
      // now, so approvers hear of the transfer, still with no workflow. Refused, it stays due.
      if ((record.publishedCount ?? 0) < record.history.length)
        await deps.announcer.announce({ tenant: record.tenant, paymentId: record.paymentId });
      return (await deps.queue.defer(candidate, new Date(record.approval.expiresAt)))
        ? 'deferred'
        : 'skipped';
    }
    // A final transfer only publishes; any other needs the rail, which may be away for everyone:
    // then the outage is the one alarm (RailUnavailable), not each transfer stuck behind it.
    if (!isFinal(record.status) && !(await railIsAvailable())) return 'paused';
    const exhausted = executionsWithoutProgress(record) >= deps.settings.maxAttempts;
    if (!isFinal(record.status) && !exhausted && Date.parse(candidate.dueAt) <= now.getTime())
      report.stuck += 1;
    const published = (record.publishedCount ?? 0) >= record.history.length;
    // A batch's transfer is counted toward its batch by the publish step (the one that puts the
    // batch's completion on the bus), so its execution runs again rather than this shortcut.
    // So is one that still owes back what it counted against its limits (the publish step gives it).
    const owesRelease = owesLimitRelease(record);
    if (isFinal(record.status) && published && record.batch === undefined && !owesRelease) {
      await deps.store.markPublished(record.tenant, record.paymentId, record.history.length, true);
      return 'skipped';
    }

    if (
      !options.everything &&
      record.status === 'AcceptedSettlementInProcess' &&
      record.cancellation === undefined &&
      published
    ) {
      const clearing = await deps.rail.clearingStatus({
        tenant: record.tenant,
        paymentId: record.paymentId,
        clientId: record.clientId,
        transfer: record.transfer,
      });
      if (clearing.state === 'pending') {
        const moved = await deps.queue.defer(
          candidate,
          secondsAfter(now, recheckSeconds(record, now, deps.settings)),
        );
        return moved ? 'deferred' : 'skipped';
      }
    }
    // Its executions so far all ended without moving it on: an operator decides, not another start.
    if (
      !(isFinal(record.status) && published) &&
      executionsWithoutProgress(record) >= deps.settings.maxAttempts
    ) {
      return (await parkCreditTransfer(deps, record, NO_PROGRESS)) ? 'parked' : 'skipped';
    }
    // Long enough for the execution to run its whole course before the transfer is due again.
    const attempt = await deps.queue.claim(
      candidate,
      secondsAfter(now, STALL_SECONDS + pollBudgetSeconds(deps.settings)),
    );
    if (attempt === undefined) return 'skipped';
    await deps.workflow.start({
      tenant: record.tenant,
      paymentId: record.paymentId,
      trigger: 'recovery',
      attempt,
    });
    return 'started';
  };

  let next = 0;
  const worker = async () => {
    while (next < candidates.length) {
      const candidate = candidates[next++];
      if (candidate === undefined) break;
      try {
        report[await handle(candidate)] += 1;
      } catch {
        // Still due: the next run tries again.
        report.failed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, candidates.length) }, worker));
  report.parkedInAll = await deps.queue.countParked();
  return report;
};
