import { webhookSecrets } from '#adapters/webhooks/webhook-secrets';
import { createWebhookEndpoint as create } from '#domain/webhooks/webhook-endpoints';
import { callerOf, jsonResponse } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { webhookDependencies } from './webhook-dependencies.ts';

export const createWebhookEndpoint = async (event: JsonEvent) => {
  const { tenant } = callerOf(event);
  const endpoint = await create(
    { ...webhookDependencies(), sealer: webhookSecrets() },
    tenant,
    event.jsonBody,
  );
  return jsonResponse(201, endpoint);
};

export const handler = jsonHttpHandler(createWebhookEndpoint);
