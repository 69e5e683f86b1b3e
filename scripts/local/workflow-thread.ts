import { Worker } from 'node:worker_threads';
import { useWorkflowStarter } from '#adapters/workflow-starter';
import type { LifecycleStart } from '#domain/lifecycle';
import { logger } from '#shared/logger';
import { apiActivityMemory } from './api-activity.ts';
import type { LocalLifecycleOptions } from './reconciler.ts';

/**
 * The local workflow (ASL runner, task functions, reconciler) in a worker thread of its own: it
 * has its own event loop and table client, so it neither waits behind the API's requests nor
 * makes them wait, and it can use a second core. The API's handlers start executions by message.
 * A start is as durable as before: the transfer is in the table and its recovery index first; a
 * lost message or a thread that dies is made good by the reconciler.
 *
 * If the thread cannot start, the runtime does not start. If it dies later, it is started again
 * at once; its start-up reconciler run resumes every unfinished transfer. If that restart fails,
 * `onFatal` is called (the runtime then exits: better loud than silently not settling).
 */
export type ToWorkflowThread = { type: 'start'; start: LifecycleStart } | { type: 'stop' };
export type FromWorkflowThread = { type: 'ready'; repaired?: number } | { type: 'stopped' };

export interface WorkflowThreadData extends LocalLifecycleOptions {
  apiActivity: SharedArrayBuffer;
}

export interface WorkflowThreadOptions extends LocalLifecycleOptions {
  /** The thread's module (the real one unless a test gives another). */
  entry?: URL;
  /** The thread died and could not be started again (default: log and exit the process). */
  onFatal?: (error: unknown) => void;
  /** Milliseconds before a thread that died is started again (default 1000). */
  restartDelayMs?: number;
}

export interface WorkflowThread {
  /** Transfers the first start-up reconciler run repaired. */
  repaired?: number;
  /** Times the thread died and was started again. */
  readonly restarts: number;
  /** Ends the thread abruptly, as a crash would (tests). */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

const ENTRY = new URL('./workflow-thread-entry.ts', import.meta.url);
const STOP_TIMEOUT_MS = 10_000;

// The thread loads the same TypeScript sources: with tsx, as `npm start` runs.
const execArgv = process.execArgv.some((arg) => arg.includes('tsx'))
  ? process.execArgv
  : [...process.execArgv, '--import', 'tsx'];

const exitFatally = (error: unknown) => {
  console.error('Cannot go on: the workflow thread died and could not be started again.', error);
  process.exit(1);
};

/** One thread; resolves once it reported ready, rejects with why it could not start. */
const launch = (
  options: WorkflowThreadOptions,
  onDied: (worker: Worker, why: unknown) => void,
): { worker: Worker; ready: Promise<number | undefined> } => {
  const workerData: WorkflowThreadData = {
    projectRoot: options.projectRoot,
    dataDir: options.dataDir,
    reconcileIntervalSeconds: options.reconcileIntervalSeconds,
    apiActivity: apiActivityMemory(),
  };
  const worker = new Worker(options.entry ?? ENTRY, { workerData, execArgv });
  const ready = new Promise<number | undefined>((resolve, reject) => {
    let started = false;
    let failure: unknown;
    worker.on('message', (message: FromWorkflowThread) => {
      if (message.type !== 'ready') return;
      started = true;
      resolve(message.repaired);
    });
    worker.on('error', (error) => {
      failure = error;
    });
    worker.once('exit', (code) => {
      const why = failure ?? new Error(`the workflow thread exited with code ${code}`);
      if (started) onDied(worker, why);
      else reject(why);
    });
  });
  return { worker, ready };
};

export const startWorkflowThread = async (options: WorkflowThreadOptions): Promise<WorkflowThread> => {
  let stopping = false;
  let restarts = 0;
  const onFatal = options.onFatal ?? exitFatally;

  const onDied = (worker: Worker, why: unknown) => {
    if (stopping || worker !== current) return;
    logger.error('The workflow thread died; starting it again (unfinished transfers stay due in the table)', {
      error: why as Error,
    });
    setTimeout(() => {
      if (stopping) return;
      restarts += 1;
      const next = launch(options, onDied);
      // Starts sent meanwhile wait in the new thread's port until it listens.
      current = next.worker;
      next.ready.catch((error: unknown) => {
        if (!stopping) onFatal(error);
      });
    }, options.restartDelayMs ?? 1000);
  };

  const first = launch(options, onDied);
  let current = first.worker;
  const repaired = await first.ready;
  const send = (message: ToWorkflowThread) => current.postMessage(message);
  useWorkflowStarter({ start: async (start) => send({ type: 'start', start }) });

  return {
    ...(repaired !== undefined && { repaired }),
    get restarts() {
      return restarts;
    },
    crash: async () => {
      await current.terminate();
    },
    stop: async () => {
      stopping = true;
      useWorkflowStarter(undefined);
      const worker = current;
      const stopped = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STOP_TIMEOUT_MS);
        worker.on('message', (message: FromWorkflowThread) => {
          if (message.type === 'stopped') {
            clearTimeout(timer);
            resolve();
          }
        });
        worker.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      worker.postMessage({ type: 'stop' } satisfies ToWorkflowThread);
      await stopped;
      await worker.terminate();
    },
  };
};
