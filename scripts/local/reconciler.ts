import { join } from 'node:path';
import { useWorkflowStarter } from '#adapters/workflow-starter';
import { logger } from '#shared/logger';
import type { ReconcileEvent } from '#workflow/reconcile';
import { LocalWorkflowRunner } from './workflow-runner.ts';

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
  stop(): Promise<void>;
}

type Reconcile = (event: ReconcileEvent) => Promise<unknown>;

export const startLocalReconciler = (reconcile: Reconcile, intervalSeconds: number) => {
  let current: Promise<void> | undefined;
  const run = (event: ReconcileEvent): Promise<void> => {
    // One run at a time, as one scheduled invocation per period on AWS.
    current ??= reconcile(event)
      .then(() => undefined)
      .catch((error: unknown) =>
        logger.warn('Reconciler run failed; the next run retries', { error: error as Error }),
      )
      .finally(() => {
        current = undefined;
      });
    return current;
  };
  const timer = setInterval(() => void run({}), intervalSeconds * 1000);
  timer.unref();
  return {
    run,
    stop: async () => {
      clearInterval(timer);
      await current;
    },
  };
};

export const startLocalLifecycle = async (options: LocalLifecycleOptions): Promise<LocalLifecycle> => {
  if (!options.enabled) {
    useWorkflowStarter({ start: async () => undefined });
    return { stop: async () => undefined };
  }
  const runner = await LocalWorkflowRunner.create({
    projectRoot: options.projectRoot,
    executionsFile: join(options.dataDir, 'executions.jsonl'),
  });
  useWorkflowStarter(runner);
  const { handler } = await import('#workflow/reconcile');
  const reconciler = startLocalReconciler(handler, options.reconcileIntervalSeconds);
  await reconciler.run({ everything: true });
  return {
    runner,
    stop: async () => {
      await reconciler.stop();
      await runner.stop();
      useWorkflowStarter(undefined);
    },
  };
};
