import { redeliverWebhookEvents as redeliver } from '#domain/webhooks/webhook-endpoints';
import { callerOf, jsonResponse } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { webhookDependencies } from './webhook-dependencies.ts';

export const redeliverWebhookEvents = async (event: JsonEvent) => {
  const { tenant } = callerOf(event);
  return jsonResponse(
    202,
    await redeliver(webhookDependencies(), tenant, event.pathParameters?.id, event.jsonBody),
  );
};

export const handler = jsonHttpHandler(redeliverWebhookEvents);
