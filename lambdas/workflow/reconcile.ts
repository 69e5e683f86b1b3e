import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { pendingAnnouncer } from '#adapters/credit-transfers/pending-announcer';
import { workflowStarter } from '#adapters/credit-transfers/workflow-starter';
import type {
  OperationsEventPublisher,
  PendingAnnouncer,
  WorkflowStarter,
} from '#domain/credit-transfers/ports';
import {
  type ReconcileReport,
  reconcileCreditTransfers,
} from '#domain/credit-transfers/reconcile-credit-transfers';
import type { LimitCounters } from '#domain/payment-controls/ports';
import { logger } from '#shared/logger';
import {
  countParkedTransfers,
  countRailUnavailable,
  countTransfersParked,
  countTransfersStuck,
  metrics,
} from '#shared/metrics';
import { observed } from '#shared/observability';
import { limitCounters, type WorkflowDependencies, workflowDependencies } from './dependencies.ts';
import { operationsEventPublisher } from './status-events.ts';

export interface ReconcileEvent {
  /** Every unfinished transfer, due or not: the local runtime sends it once at start-up. */
  everything?: boolean;
}

export type ReconcilerDependencies = WorkflowDependencies & {
  workflow: WorkflowStarter;
  announcer: PendingAnnouncer;
  events: OperationsEventPublisher;
  /** The limit counters: a transfer its initiation left half counted is counted here. */
  counters?: LimitCounters;
};

/**
 * The reconciler, run by an EventBridge Scheduler schedule on AWS and by a timer locally:
 * starts a workflow execution for every transfer that stopped progressing, and counts the
 * transfers it finds stuck (not final, past their due time).
 */
export const reconcile = (dependencies: () => ReconcilerDependencies) =>
  observed(async (event: ReconcileEvent | null | undefined): Promise<ReconcileReport> => {
    const { store, rail, workflow, announcer, clock, settings, events, counters } = dependencies();
    const report = await reconcileCreditTransfers(
      {
        queue: store,
        store,
        rail,
        workflow,
        announcer,
        clock,
        settings,
        events,
        ...(counters !== undefined && { counters }),
      },
      { everything: event?.everything === true },
    );
    countTransfersStuck(report.stuck);
    metrics.addMetric('TransfersNeedingRecovery', MetricUnit.Count, report.found);
    metrics.addMetric('RecoveryExecutionsStarted', MetricUnit.Count, report.started);
    metrics.addMetric('RecoveryFailures', MetricUnit.Count, report.failed);
    // One figure for the outage, whatever number of transfers waits behind it: the alarm pages once.
    if (report.railAvailable !== undefined) countRailUnavailable(report.railAvailable);
    metrics.addMetric('RecoveryPausedTransfers', MetricUnit.Count, report.paused);
    if (report.railAvailable === false)
      logger.error('The rail answers nothing: recovery paused, no attempt counted, nothing parked', {
        paused: report.paused,
      });
    countParkedTransfers(report.parkedInAll);
    countTransfersParked(report.parked);
    if (report.parked > 0) logger.error('Credit transfers parked for an operator', { parked: report.parked });
    if (report.found > 0) logger.info('Reconciled unfinished credit transfers', { ...report });
    if (report.failed > 0) logger.warn('Some transfers could not be driven on; they stay due', { ...report });
    return report;
  });

// Resolved at each start, so a starter registered by the local runtime is always the one used.
const workflow: WorkflowStarter = {
  start: (start) => workflowStarter().start(start),
  isDriving: (transfer) => workflowStarter().isDriving?.(transfer) ?? false,
};

const announcer: PendingAnnouncer = { announce: (transfer) => pendingAnnouncer().announce(transfer) };

export const handler = reconcile(() => ({
  ...workflowDependencies(),
  workflow,
  announcer,
  events: operationsEventPublisher(),
  counters: limitCounters(),
}));
