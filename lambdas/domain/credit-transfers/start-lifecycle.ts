import type { LifecycleStart } from './lifecycle.ts';
import type { WorkflowStarter } from './ports.ts';

/**
 * Starts the lifecycle workflow of a transfer that is already stored. A failure to start must
 * not fail the request that stored it: the transfer stays due in the recovery index and the
 * reconciler starts it (the adapter logs the failure).
 */
export const startLifecycle = async (
  workflow: WorkflowStarter | undefined,
  start: LifecycleStart,
): Promise<void> => {
  if (workflow === undefined) return;
  try {
    await workflow.start(start);
  } catch {
    // Left to the reconciler, see above.
  }
};
