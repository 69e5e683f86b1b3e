import type { APIGatewayProxyEvent } from 'aws-lambda';
import { getWebhookEndpoint as get } from '#domain/webhooks/webhook-endpoints';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { webhookDependencies } from './webhook-dependencies.ts';

export const getWebhookEndpoint = async (event: APIGatewayProxyEvent) => {
  const { tenant } = callerOf(event);
  return jsonResponse(200, await get(webhookDependencies(), tenant, event.pathParameters?.id));
};

export const handler = httpHandler(getWebhookEndpoint);
