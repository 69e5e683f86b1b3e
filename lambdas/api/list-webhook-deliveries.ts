import type { APIGatewayProxyEvent } from 'aws-lambda';
import { listWebhookDeliveries as list } from '#domain/webhooks/webhook-endpoints';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { queryParameters } from './query-string.ts';
import { webhookDependencies } from './webhook-dependencies.ts';

export const listWebhookDeliveries = async (event: APIGatewayProxyEvent) => {
  const { tenant } = callerOf(event);
  return jsonResponse(
    200,
    await list(webhookDependencies(), tenant, event.pathParameters?.id, queryParameters(event)),
  );
};

export const handler = httpHandler(listWebhookDeliveries);
