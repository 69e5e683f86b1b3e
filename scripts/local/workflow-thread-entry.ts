import { parentPort, workerData } from 'node:worker_threads';
import { logger } from '#shared/logger';
import { useApiActivityMemory } from './api-activity.ts';
import { runLocalLifecycle } from './reconciler.ts';
import type { FromWorkflowThread, ToWorkflowThread, WorkflowThreadData } from './workflow-thread.ts';

/** The workflow thread (see workflow-thread.ts): the lifecycle, driven by the server thread's messages. */
const port = parentPort;
if (!port) throw new Error('workflow-thread-entry.ts runs as a worker thread only');
const data = workerData as WorkflowThreadData;
useApiActivityMemory(data.apiActivity);
const lifecycle = await runLocalLifecycle({
  projectRoot: data.projectRoot,
  dataDir: data.dataDir,
  reconcileIntervalSeconds: data.reconcileIntervalSeconds,
});
const reply = (message: FromWorkflowThread) => port.postMessage(message);
port.on('message', (message: ToWorkflowThread) => {
  if (message.type === 'start') {
    lifecycle.runner.start(message.start).catch((error: unknown) => {
      // The transfer stays due in the table: the reconciler starts it.
      logger.warn('Lifecycle execution not started; the reconciler will start it', { error: error as Error });
    });
  } else if (message.type === 'stop') {
    void lifecycle.stop().finally(() => reply({ type: 'stopped' }));
  }
});
reply({ type: 'ready', ...(lifecycle.repaired !== undefined && { repaired: lifecycle.repaired }) });
