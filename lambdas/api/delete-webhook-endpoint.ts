import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { deleteWebhookEndpoint as remove } from '#domain/webhooks/webhook-endpoints';
import { callerOf } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { webhookDependencies } from './webhook-dependencies.ts';

export const deleteWebhookEndpoint = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const { tenant } = callerOf(event);
  await remove(webhookDependencies(), tenant, event.pathParameters?.id);
  return { statusCode: 204, headers: { 'Cache-Control': 'no-store' }, body: '' };
};

export const handler = httpHandler(deleteWebhookEndpoint);
