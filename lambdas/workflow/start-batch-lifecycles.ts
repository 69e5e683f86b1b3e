import { setTimeout as sleep } from 'node:timers/promises';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbLifecycleStore } from '#adapters/credit-transfers/credit-transfer-lifecycle-store';
import { pendingAnnouncer } from '#adapters/credit-transfers/pending-announcer';
import { bulkWorkflowStarter } from '#adapters/credit-transfers/workflow-starter';
import { DynamoDbBatchStore } from '#adapters/iso20022/batch-store';
import { DynamoDbLimitCounters } from '#adapters/payment-controls/limit-counters';
import { systemClock } from '#domain/commons/ports';
import type { PendingAnnouncer, WorkflowStarter } from '#domain/credit-transfers/ports';
import type { BatchReference } from '#domain/iso20022/ports';
import {
  type BatchLifecyclesDependencies,
  type BatchLifecyclesReport,
  MAX_BATCH_STARTS_PER_SECOND,
  type StartPace,
  startBatchLifecycles,
} from '#domain/iso20022/start-batch-lifecycles';
import { MIN_BATCH_STARTS_PER_SECOND } from '#domain/iso20022/submit-batch';
import { requiredEnv, wholeNumber } from '#shared/config';
import { logger } from '#shared/logger';
import { observed } from '#shared/observability';

const isBatchReference = (event: unknown): event is BatchReference => {
  const { tenant, batchId } = (event ?? {}) as Record<string, unknown>;
  return typeof tenant === 'string' && tenant !== '' && typeof batchId === 'string' && batchId !== '';
};

/**
 * Invoked asynchronously by the batch request once its batch is stored: starts every transfer's
 * lifecycle. Starts that failed throw, so Lambda invokes it again (a repeat starts nothing twice);
 * past its retries the transfers are the reconciler's, as they always were.
 */
export const startLifecyclesOfBatch = (dependencies: () => BatchLifecyclesDependencies) =>
  observed(
    async (event: unknown): Promise<BatchLifecyclesReport> => {
      if (!isBatchReference(event)) throw new Error('The event names no batch (tenant, batchId)');
      logger.info('Starting the lifecycles of a batch');
      const report = await startBatchLifecycles(dependencies(), event);
      if (!report.found) logger.warn('No stored batch by that id: nothing started');
      else if (report.failed > 0) {
        logger.warn('Some lifecycles of the batch did not start; they stay due', { ...report });
        throw new Error(`${report.failed} lifecycles of the batch did not start`);
      } else logger.info('Started the lifecycles of a batch', { ...report });
      return report;
    },
    (event) => (isBatchReference(event) ? { tenant: event.tenant, batchId: event.batchId } : {}),
  );

/**
 * BATCH_STARTS_PER_SECOND: set by the stack from the concurrency formula (lib/concurrency.ts), by
 * the local runtime from the same formula unless given.
 */
const startsPerSecond = (): number =>
  wholeNumber('Environment variable BATCH_STARTS_PER_SECOND', requiredEnv('BATCH_STARTS_PER_SECOND'), {
    min: MIN_BATCH_STARTS_PER_SECOND,
    max: MAX_BATCH_STARTS_PER_SECOND,
  });

let batches: DynamoDbBatchStore | undefined;
let pace: StartPace | undefined;
// Resolved at each start, so a starter registered by the local runtime is always the one used.
const workflow: WorkflowStarter = { start: (start) => bulkWorkflowStarter().start(start) };
const announcer: PendingAnnouncer = { announce: (transfer) => pendingAnnouncer().announce(transfer) };

let store: DynamoDbLifecycleStore | undefined;
let counters: DynamoDbLimitCounters | undefined;

export const handler = startLifecyclesOfBatch(() => {
  batches ??= new DynamoDbBatchStore(documentClient(), tableName());
  pace ??= {
    startsPerSecond: startsPerSecond(),
    clock: systemClock,
    sleep: async (ms) => void (await sleep(ms)),
  };
  store ??= new DynamoDbLifecycleStore(documentClient(), tableName());
  counters ??= new DynamoDbLimitCounters(documentClient(), tableName());
  return { batches, workflow, announcer, pace, limits: { store, counters, clock: systemClock } };
});
