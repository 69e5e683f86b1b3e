import type { APIGatewayProxyEvent } from 'aws-lambda';
import { listWebhookEndpoints as list } from '#domain/webhooks/webhook-endpoints';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { listCursorKey } from './list-cursor-key.ts';
import { queryParameters } from './query-string.ts';
import { webhookDependencies } from './webhook-dependencies.ts';

export const listWebhookEndpoints = async (event: APIGatewayProxyEvent) => {
  const { tenant } = callerOf(event);
  const page = await list(
    { ...webhookDependencies(), cursorKey: listCursorKey },
    tenant,
    queryParameters(event),
  );
  return jsonResponse(200, page.endpoints, { 'Pagination-Cursor': page.nextCursor });
};

export const handler = httpHandler(listWebhookEndpoints);
