import type { SQSEvent } from 'aws-lambda';
import { delaySecondsUntil, type WakeUpMessage } from '#adapters/webhooks/delivery-waker';
import { DEFAULT_DISPATCHER_LIMITS, DeliveryDispatcher } from '#domain/webhooks/webhook-dispatcher';
import { ATTEMPT_TIMEOUT_MS } from '#domain/webhooks/webhook-schedule';
import { invocationDeadline } from '#shared/deadline';
import { logger } from '#shared/logger';
import { countWebhookEndpointDisabled } from '#shared/metrics';
import { observed } from '#shared/observability';
import { deliveryDependencies } from './dependencies.ts';

/** What a run keeps of its invocation once it stops starting attempts: the last attempts' time limit, and a margin. */
const FINISH_MS = ATTEMPT_TIMEOUT_MS + 2_000;

/** When a run stops starting attempts: when its invocation leaves only time to finish those started. */
export const startingEndsAt = (deadline: number | undefined): number =>
  (deadline ?? Number.POSITIVE_INFINITY) - FINISH_MS;

const isWakeUps = (event: unknown): event is SQSEvent =>
  Array.isArray((event as { Records?: unknown } | undefined)?.Records);

/**
 * Sends the deliveries that are due (retries, and anything a dead worker held) from the queue in
 * the table, then stops. Woken by the wake-up queue when a retry falls due (the message held back
 * until then), and started every minute to find what no wake-up announced (a claim a dead worker
 * left, a wake-up that could not be sent). A wake-up for a retry more than 15 minutes ahead is sent
 * on again for the rest of its wait. Nothing polls: an idle stage costs one short run a minute.
 */
export const deliverDueWebhooks = async (event?: unknown): Promise<{ attempts: number }> => {
  const deps = { ...deliveryDependencies(), onEndpointDisabled: () => countWebhookEndpointDisabled() };
  if (isWakeUps(event) && deps.waker) {
    const now = new Date();
    for (const record of event.Records) {
      const message = JSON.parse(record.body) as WakeUpMessage;
      const dueAt = new Date(message.dueAt);
      if (delaySecondsUntil(dueAt, now) > 0) await deps.waker.wakeAt(message, dueAt);
    }
  }
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
  const ends = startingEndsAt(invocationDeadline());
  // Until nothing due is left (or the invocation's time is): each pump starts what the pool has room for.
  while (Date.now() < ends) {
    const started = await dispatcher.pump();
    if (started === 0) {
      await dispatcher.idle();
      if ((await dispatcher.pump()) === 0) break;
    }
  }
  await dispatcher.idle();
  return { attempts };
};

export const handler = observed(deliverDueWebhooks);
