import type { LifecycleStart } from './lifecycle.ts';
import type { PendingAnnouncer, WorkflowStarter } from './ports.ts';

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

/**
 * Announces a stored transfer held for approval (publishes its change to Pending). A failure must
 * not fail the request that stored it either: the change stays unpublished, and the reconciler
 * announces it once the transfer is due (the adapter logs the failure).
 */
export const announcePending = async (
  announcer: PendingAnnouncer | undefined,
  transfer: { tenant: string; paymentId: string },
): Promise<void> => {
  if (announcer === undefined) return;
  try {
    await announcer.announce({ tenant: transfer.tenant, paymentId: transfer.paymentId });
  } catch {
    // Left to the reconciler, see above.
  }
};
