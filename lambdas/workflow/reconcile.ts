import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { type ReconcileReport, reconcileCreditTransfers } from '#domain/reconcile-credit-transfers';
import { logger } from '#shared/logger';
import { type WorkflowDependencies, workflowDependencies } from './dependencies.ts';

/** CloudWatch metrics through the embedded metric format (a log line, no API call). */
export const metrics = new Metrics({ namespace: 'CreditTransfers', serviceName: 'credit-transfers' });

export interface ReconcileEvent {
  /** Every unfinished transfer, due or not: the local runtime sends it once at start-up. */
  everything?: boolean;
}

/**
 * The reconciler, run by an EventBridge Scheduler schedule on AWS and by a timer locally:
 * starts a workflow execution for every transfer that stopped progressing.
 */
export const reconcile =
  (dependencies: () => WorkflowDependencies) =>
  async (event: ReconcileEvent | null | undefined): Promise<ReconcileReport> => {
    const { store, rail, workflow, clock, settings } = dependencies();
    const report = await reconcileCreditTransfers(
      { queue: store, store, rail, workflow, clock, settings },
      { everything: event?.everything === true },
    );
    metrics.addMetric('TransfersNeedingRecovery', MetricUnit.Count, report.found);
    metrics.addMetric('RecoveryExecutionsStarted', MetricUnit.Count, report.started);
    metrics.addMetric('RecoveryFailures', MetricUnit.Count, report.failed);
    metrics.publishStoredMetrics();
    if (report.found > 0) logger.info('Reconciled unfinished credit transfers', { ...report });
    if (report.failed > 0) logger.warn('Some transfers could not be driven on; they stay due', { ...report });
    return report;
  };

export const handler = reconcile(workflowDependencies);
