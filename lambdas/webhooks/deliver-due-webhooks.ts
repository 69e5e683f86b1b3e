import { DEFAULT_DISPATCHER_LIMITS, DeliveryDispatcher } from '#domain/webhooks/webhook-dispatcher';
import { ATTEMPT_TIMEOUT_MS } from '#domain/webhooks/webhook-schedule';
import { invocationDeadline } from '#shared/deadline';
import { logger } from '#shared/logger';
import { countWebhookEndpointDisabled } from '#shared/metrics';
import { observed } from '#shared/observability';
import { deliveryDependencies } from './dependencies.ts';

/** How long one run looks at the queue: a schedule starts a run every minute. */
const RUN_MS = 50_000;
const POLL_MS = 1000;
/** What a run keeps of its invocation after it stops looking: the last attempts' time limit, and a margin. */
const FINISH_MS = ATTEMPT_TIMEOUT_MS + 2_000;

/** When a run stops looking at the queue: after RUN_MS, or sooner if its invocation ends sooner. */
export const lookingEndsAt = (now: number, deadline: number | undefined): number =>
  Math.min(now + RUN_MS, (deadline ?? Number.POSITIVE_INFINITY) - FINISH_MS);

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * Sends the deliveries that are due (retries, and anything a dead worker held) from the queue in
 * the table. Started every minute; each run looks every second for RUN_MS (less when the function's
 * timeout leaves less), so a 5-second retry goes out about on time, and a run that dies leaves its
 * claims to end and be taken again.
 */
export const deliverDueWebhooks = async (): Promise<{ attempts: number }> => {
  const deps = { ...deliveryDependencies(), onEndpointDisabled: () => countWebhookEndpointDisabled() };
  let attempts = 0;
  const dispatcher = new DeliveryDispatcher(deps, DEFAULT_DISPATCHER_LIMITS, {
    onSettled: () => {
      attempts++;
    },
    onError: (error, delivery) =>
      logger.warn('A webhook attempt failed; the delivery is due again', {
        eventId: delivery.eventId,
        error: error as Error,
      }),
  });
  const ends = lookingEndsAt(Date.now(), invocationDeadline());
  while (Date.now() < ends) {
    const started = await dispatcher.pump();
    if (started === 0) await sleep(POLL_MS);
  }
  await dispatcher.idle();
  return { attempts };
};

export const handler = observed(deliverDueWebhooks);
