import { DEFAULT_DISPATCHER_LIMITS, DeliveryDispatcher } from '#domain/webhook-dispatcher';
import { logger } from '#shared/logger';
import { countWebhookEndpointDisabled } from '#shared/metrics';
import { observed } from '#shared/observability';
import { deliveryDependencies } from './dependencies.ts';

/** How long one run looks at the queue: a schedule starts a run every minute. */
const RUN_MS = 50_000;
const POLL_MS = 1000;

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * Sends the deliveries that are due (retries, and anything a dead worker held) from the queue in
 * the table. Started every minute; each run looks every second for RUN_MS, so a 5-second retry
 * goes out about on time, and a run that dies leaves its claims to end and be taken again.
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
  const ends = Date.now() + RUN_MS;
  while (Date.now() < ends) {
    const started = await dispatcher.pump();
    if (started === 0) await sleep(POLL_MS);
  }
  await dispatcher.idle();
  return { attempts };
};

export const handler = observed(deliverDueWebhooks);
