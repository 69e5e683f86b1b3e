import { type RetryPolicy, retryPolicyFrom } from '#domain/webhooks/webhook-schedule';
import type { WebhookUrlPolicy } from '#domain/webhooks/webhook-url';
import { optionalEnv } from '#shared/config';

/**
 * WEBHOOK_ALLOW_LOCAL_RECEIVERS=true: the local runtime's exception for a developer's receiver on
 * this machine. Only the local runtime sets it; no stage does.
 */
export const webhookUrlPolicy = (): WebhookUrlPolicy => ({
  allowLocalReceivers: optionalEnv('WEBHOOK_ALLOW_LOCAL_RECEIVERS') === 'true',
});

/** WEBHOOK_RETRY_SCHEDULE_SECONDS and WEBHOOK_DISABLE_AFTER_SECONDS, or the Standard Webhooks defaults. */
export const webhookRetryPolicy = (): RetryPolicy => {
  const schedule = optionalEnv('WEBHOOK_RETRY_SCHEDULE_SECONDS');
  const disableAfter = optionalEnv('WEBHOOK_DISABLE_AFTER_SECONDS');
  return retryPolicyFrom({
    ...(schedule !== undefined && { schedule }),
    ...(disableAfter !== undefined && { disableAfter }),
  });
};
