import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { BatchLifecycleStarter, BatchReference } from '#domain/iso20022/ports';
import { requiredEnv } from '#shared/config';
import { logger } from '#shared/logger';
import { lambdaClient } from '../aws/lambda-client.ts';

/**
 * Invokes the function that starts a batch's lifecycles (BATCH_LIFECYCLES_FUNCTION) asynchronously:
 * Lambda queues the event and answers at once, runs it after the request has answered, and
 * retries it on failure. The event holds identifiers only.
 */
export class LambdaBatchLifecycleStarter implements BatchLifecycleStarter {
  constructor(
    private readonly lambda: Pick<LambdaClient, 'send'>,
    private readonly functionName: string,
  ) {}

  async start(batch: BatchReference): Promise<void> {
    try {
      await this.lambda.send(
        new InvokeCommand({
          FunctionName: this.functionName,
          InvocationType: 'Event',
          Payload: new TextEncoder().encode(JSON.stringify({ tenant: batch.tenant, batchId: batch.batchId })),
        }),
      );
    } catch (error) {
      logger.warn("A batch's lifecycles were not started; the reconciler will start them", {
        batchId: batch.batchId,
        error: error as Error,
      });
      throw error;
    }
  }
}

let local: BatchLifecycleStarter | undefined;

/** The local runtime runs that function in its own process and registers its starter here. */
export const useBatchLifecycleStarter = (starter: BatchLifecycleStarter | undefined): void => {
  local = starter;
};

let shared: BatchLifecycleStarter | undefined;

/** The starter of this runtime: the local one when registered, else the asynchronous invocation. */
export const batchLifecycleStarter = (): BatchLifecycleStarter => {
  if (local) return local;
  shared ??= new LambdaBatchLifecycleStarter(lambdaClient(), requiredEnv('BATCH_LIFECYCLES_FUNCTION'));
  return shared;
};
