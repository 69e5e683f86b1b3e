import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbBatchStore } from '#adapters/iso20022/batch-store';
import { everyListener, publishStatusEvents } from '#domain/credit-transfers/lifecycle-steps';
import { batchOutcomeListener } from '#domain/iso20022/batch-outcome';
import { limitReleaseListener } from '#domain/payment-controls/count-limits';
import { limitCounters, workflowDependencies } from './dependencies.ts';
import { batchEventPublisher, statusEventPublisher } from './status-events.ts';
import { lifecycleTask } from './task.ts';

/**
 * Task state: publishes the status changes the state carries; its output is the state, noted as
 * published. A final transfer first gives back what it counted against limits (ended Rejected or
 * Cancelled), and one of a batch is counted toward the batch's outcome.
 */
export const handler = lifecycleTask('publishStatusEvents', (state) => {
  const deps = workflowDependencies();
  return publishStatusEvents(
    {
      ...deps,
      publisher: statusEventPublisher(),
      finalTransfers: everyListener(
        limitReleaseListener({ store: deps.store, counters: limitCounters(), clock: deps.clock }),
        batchOutcomeListener({
          batches: new DynamoDbBatchStore(documentClient(), tableName()),
          publisher: batchEventPublisher(),
          clock: deps.clock,
        }),
      ),
    },
    state,
  );
});
