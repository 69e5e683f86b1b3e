import { type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { type LifecycleStart, lifecycleExecutionName } from '#domain/credit-transfers/lifecycle';
import type { WorkflowStarter } from '#domain/credit-transfers/ports';
import { requiredEnv } from '#shared/config';
import { logger } from '#shared/logger';
import { bulkStepFunctionsClient, stepFunctionsClient } from '../aws/step-functions-client.ts';

/**
 * Starts the lifecycle state machine (STATE_MACHINE_ARN). The execution name comes from tenant,
 * paymentId and trigger, so a repeated start is refused as ExecutionAlreadyExists: that is the
 * wanted outcome, not an error.
 */
export class StepFunctionsWorkflowStarter implements WorkflowStarter {
  constructor(
    private readonly stepFunctions: Pick<SFNClient, 'send'>,
    private readonly stateMachineArn: string,
  ) {}

  async start(start: LifecycleStart): Promise<void> {
    const name = lifecycleExecutionName(start);
    try {
      await this.stepFunctions.send(
        new StartExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name,
          // Identifiers only: execution history must not hold payment data.
          input: JSON.stringify({
            tenant: start.tenant,
            paymentId: start.paymentId,
            trigger: start.trigger,
            ...(start.attempt !== undefined && { attempt: start.attempt }),
          }),
        }),
      );
    } catch (error) {
      if ((error as { name?: unknown }).name === 'ExecutionAlreadyExists') return;
      logger.warn('Lifecycle workflow not started; the reconciler will start it', {
        executionName: name,
        paymentId: start.paymentId,
        error: error as Error,
      });
      throw error;
    }
  }
}

let local: WorkflowStarter | undefined;

/** The local runtime runs the workflow in its own process and registers its starter here. */
export const useWorkflowStarter = (starter: WorkflowStarter | undefined): void => {
  local = starter;
};

let shared: WorkflowStarter | undefined;

/** The starter of this runtime: the local runner when one is registered, else Step Functions. */
export const workflowStarter = (): WorkflowStarter => {
  if (local) return local;
  shared ??= new StepFunctionsWorkflowStarter(stepFunctionsClient(), requiredEnv('STATE_MACHINE_ARN'));
  return shared;
};

let bulk: WorkflowStarter | undefined;

/** The starter of a function that starts many executions at once: throttled by the SDK to Step Functions' rate. */
export const bulkWorkflowStarter = (): WorkflowStarter => {
  if (local) return local;
  bulk ??= new StepFunctionsWorkflowStarter(bulkStepFunctionsClient(), requiredEnv('STATE_MACHINE_ARN'));
  return bulk;
};
