import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { checkStandInCall } from '#adapters/aws/stand-ins';
import { announcement, usePendingAnnouncer } from '#adapters/credit-transfers/pending-announcer';
import {
  StepFunctionsWorkflowStarter,
  useWorkflowStarter,
} from '#adapters/credit-transfers/workflow-starter';
import { useBatchLifecycleStarter } from '#adapters/iso20022/batch-lifecycle-starter';
import type { LifecycleStart } from '#domain/credit-transfers/lifecycle';
import type { ReconcileReport } from '#domain/credit-transfers/reconcile-credit-transfers';
import type { BatchReference } from '#domain/iso20022/ports';
import { logger } from '#shared/logger';
import type { ReconcileEvent } from '#workflow/reconcile';
import { BATCH_LIFECYCLES_ENTRY, RECONCILER_ENTRY, WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { LOCAL_ACCOUNT, LOCAL_REGION, LOCAL_STATE_MACHINE_NAME } from './iam-policies.ts';
import { inOwnContext } from './invocations.ts';
import { checkServiceCall } from './service-calls.ts';
import { LOCAL_STATE_MACHINE_ARN, LocalWorkflowRunner } from './workflow-runner.ts';

/**
 * The lifecycle on one machine: the ASL runner in this process (registered as the workflow
 * starter the handlers use), and the reconciler on a timer, run once right at start-up over
 * every unfinished transfer, since after a restart nothing of theirs is running.
 */
export interface LocalLifecycleOptions {
  projectRoot: string;
  dataDir: string;
  /** Seconds between reconciler runs. */
  reconcileIntervalSeconds: number;
  /** `off`: transfers stay as initiated (no workflow runs); for measuring the API alone. */
  enabled: boolean;
}

export interface LocalLifecycle {
  runner?: LocalWorkflowRunner;
  /** Transfers the start-up run repaired (see ReconcileReport.repaired). */
  repaired?: number;
  stop(): Promise<void>;
}

type Reconcile = (event: ReconcileEvent) => Promise<ReconcileReport>;

/**
 * Step Functions as the handlers' starter calls it: StartExecution, checked against the calling
 * function's IAM like any call, runs the execution in the local runner. The handlers keep the
 * starter they have on AWS (StepFunctionsWorkflowStarter), so a refused start takes their own path.
 */
const localStepFunctions = (runner: LocalWorkflowRunner): Pick<SFNClient, 'send'> => ({
  send: (async (command: StartExecutionCommand) => {
    await checkStandInCall({ action: 'states:StartExecution', resource: 'STATE_MACHINE_ARN' });
    await runner.start(JSON.parse(command.input.input ?? '{}') as LifecycleStart);
    return {
      executionArn: `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:execution:${LOCAL_STATE_MACHINE_NAME}:${command.input.name}`,
      startDate: new Date(),
    };
  }) as Pick<SFNClient, 'send'>['send'],
});

export const startLocalReconciler = (reconcile: Reconcile, intervalSeconds: number) => {
  let current: Promise<ReconcileReport | undefined> | undefined;
  const run = (event: ReconcileEvent): Promise<ReconcileReport | undefined> => {
    // One run at a time, as one scheduled invocation per period on AWS. The start-up run over
    // everything is the local runtime's own repair after the machine stopped (it scans the table,
    // which the Reconciler function may not, and never does on AWS): it runs as the runtime.
    const functionName = event.everything === true ? undefined : 'Reconciler';
    current ??= (async () => {
      // A scheduled run is the schedule's invocation: its role must be allowed to make it.
      if (functionName !== undefined) await checkServiceCall({ kind: 'scheduled', functionName });
      return inOwnContext(
        functionName,
        `reconcile-${randomUUID()}`,
        () => reconcile(event),
        RECONCILER_ENTRY,
      );
    })()
      .catch((error: unknown) => {
        logger.warn('Reconciler run failed; the next run retries', { error: error as Error });
        return undefined;
      })
      .finally(() => {
        current = undefined;
      });
    return current;
  };
  // Until a start-up run over everything succeeds, every run is one (nothing else would find
  // the transfers whose index entry a crash lost).
  let startUpDone = false;
  const runStartUp = async () => {
    const report = await run({ everything: true });
    if (report !== undefined) startUpDone = true;
    return report;
  };
  const timer = setInterval(() => void (startUpDone ? run({}) : runStartUp()), intervalSeconds * 1000);
  timer.unref();
  return {
    run,
    runStartUp,
    stop: async () => {
      clearInterval(timer);
      await current;
    },
  };
};

/**
 * The StartBatchLifecycles function, invoked as Lambda invokes it asynchronously (the caller's
 * lambda:InvokeFunction checked first): the batch request only queues the event, which runs after the request has answered, as that function (its IAM
 * policies). A run that fails leaves its transfers to the reconciler, as after Lambda's retries.
 */
const startLocalBatchLifecycles = async () => {
  const { handler } = await import('#workflow/start-batch-lifecycles');
  const running = new Set<Promise<unknown>>();
  useBatchLifecycleStarter({
    start: async (batch: BatchReference) => {
      // The submitting function's lambda:InvokeFunction, refused as Lambda refuses it.
      try {
        await checkStandInCall({ action: 'lambda:InvokeFunction', resource: 'BATCH_LIFECYCLES_FUNCTION' });
      } catch (error) {
        logger.warn("A batch's lifecycles were not started; the reconciler will start them", {
          batchId: batch.batchId,
          error: error as Error,
        });
        throw error;
      }
      setImmediate(() => {
        const run = inOwnContext(
          'StartBatchLifecycles',
          `batch-lifecycles-${randomUUID()}`,
          () => handler(batch),
          BATCH_LIFECYCLES_ENTRY,
        )
          .catch((error: unknown) =>
            logger.warn("A batch's lifecycles did not all start; the reconciler will start them", {
              batchId: batch.batchId,
              error: error as Error,
            }),
          )
          .finally(() => running.delete(run));
        running.add(run);
      });
    },
  });
  return {
    stop: async () => {
      useBatchLifecycleStarter(undefined);
      await Promise.all(running);
    },
  };
};

/**
 * The lifecycle's PublishStatusEvents function, invoked as Lambda invokes it asynchronously (the
 * caller's lambda:InvokeFunction checked first) to announce a transfer held for approval: it runs
 * after the request has answered, as that function (its IAM policies), outside any execution. A
 * run that fails leaves the change unpublished, for the reconciler, as after Lambda's retries.
 */
const startLocalPendingAnnouncer = async () => {
  const { handler } = await import('#workflow/publish-status-events');
  const running = new Set<Promise<unknown>>();
  usePendingAnnouncer({
    announce: async (transfer) => {
      // The calling function's lambda:InvokeFunction, refused as Lambda refuses it.
      try {
        await checkStandInCall({
          action: 'lambda:InvokeFunction',
          resource: 'PUBLISH_STATUS_EVENTS_FUNCTION',
        });
      } catch (error) {
        logger.warn(
          "A held transfer's change to Pending was not announced; the reconciler will announce it",
          {
            paymentId: transfer.paymentId,
            error: error as Error,
          },
        );
        throw error;
      }
      setImmediate(() => {
        const run = inOwnContext(
          'PublishStatusEvents',
          `announce-${randomUUID()}`,
          () => handler(announcement(transfer)),
          WORKFLOW_FUNCTIONS.publishStatusEvents.entry,
        )
          .catch((error: unknown) =>
            logger.warn(
              "A held transfer's change to Pending was not published; the reconciler will announce it",
              {
                paymentId: transfer.paymentId,
                error: error as Error,
              },
            ),
          )
          .finally(() => running.delete(run));
        running.add(run);
      });
    },
  });
  return {
    stop: async () => {
      usePendingAnnouncer(undefined);
      await Promise.all(running);
    },
  };
};

export const startLocalLifecycle = async (options: LocalLifecycleOptions): Promise<LocalLifecycle> => {
  if (!options.enabled) {
    useWorkflowStarter({ start: async () => undefined });
    useBatchLifecycleStarter({ start: async () => undefined });
    usePendingAnnouncer({ announce: async () => undefined });
    return { stop: async () => undefined };
  }
  const runner = await LocalWorkflowRunner.create({
    projectRoot: options.projectRoot,
    executionsFile: join(options.dataDir, 'executions.jsonl'),
  });
  const stepFunctions = new StepFunctionsWorkflowStarter(localStepFunctions(runner), LOCAL_STATE_MACHINE_ARN);
  // Starts go through Step Functions' API (IAM checked); what is queued here, only the runner knows.
  useWorkflowStarter({
    start: (start) => stepFunctions.start(start),
    isDriving: (transfer) => runner.isDriving(transfer),
  });
  const batchLifecycles = await startLocalBatchLifecycles();
  const announcer = await startLocalPendingAnnouncer();
  const { handler } = await import('#workflow/reconcile');
  const reconciler = startLocalReconciler(handler, options.reconcileIntervalSeconds);
  const first = await reconciler.runStartUp();
  return {
    runner,
    repaired: first?.repaired,
    stop: async () => {
      await batchLifecycles.stop();
      await reconciler.stop();
      await announcer.stop();
      await runner.stop();
      useWorkflowStarter(undefined);
    },
  };
};
