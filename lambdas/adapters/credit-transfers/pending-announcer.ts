import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { PendingAnnouncer } from '#domain/credit-transfers/ports';
import { requiredEnv } from '#shared/config';
import { logger } from '#shared/logger';
import { lambdaClient } from '../aws/lambda-client.ts';

/**
 * Invokes the lifecycle's publish step function (PUBLISH_STATUS_EVENTS_FUNCTION) asynchronously
 * for a transfer held for approval, with the state an execution's first step hands it: it
 * publishes the unpublished changes from the stored history (the change to Pending) and notes
 * them published. No execution runs: only that function may put status events on the bus. Lambda
 * queues the event and answers at once, and retries it on failure. The event holds identifiers only.
 */
export class LambdaPendingAnnouncer implements PendingAnnouncer {
  constructor(
    private readonly lambda: Pick<LambdaClient, 'send'>,
    private readonly functionName: string,
  ) {}

  async announce(transfer: { tenant: string; paymentId: string }): Promise<void> {
    try {
      await this.lambda.send(
        new InvokeCommand({
          FunctionName: this.functionName,
          InvocationType: 'Event',
          Payload: new TextEncoder().encode(JSON.stringify(announcement(transfer))),
        }),
      );
    } catch (error) {
      logger.warn("A held transfer's change to Pending was not announced; the reconciler will announce it", {
        paymentId: transfer.paymentId,
        error: error as Error,
      });
      throw error;
    }
  }
}

/** The publish step's input: a lifecycle state with no changes handed on, so it reads the history. */
export const announcement = ({ tenant, paymentId }: { tenant: string; paymentId: string }) => ({
  tenant,
  paymentId,
  trigger: 'initiation' as const,
});

let local: PendingAnnouncer | undefined;

/** The local runtime runs that function in its own process and registers its announcer here. */
export const usePendingAnnouncer = (announcer: PendingAnnouncer | undefined): void => {
  local = announcer;
};

let shared: PendingAnnouncer | undefined;

/** The announcer of this runtime: the local one when registered, else the asynchronous invocation. */
export const pendingAnnouncer = (): PendingAnnouncer => {
  if (local) return local;
  shared ??= new LambdaPendingAnnouncer(lambdaClient(), requiredEnv('PUBLISH_STATUS_EVENTS_FUNCTION'));
  return shared;
};
