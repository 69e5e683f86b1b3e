import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { listEvents as list } from '#domain/webhooks/list-events';
import { callerOf } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { listCursorKey } from './list-cursor-key.ts';
import { queryParameters } from './query-string.ts';
import { webhookDependencies } from './webhook-dependencies.ts';

export const listEvents = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const { tenant } = callerOf(event);
  const page = await list(
    { ...webhookDependencies(), cursorKey: listCursorKey },
    tenant,
    queryParameters(event),
  );
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      'Pagination-Cursor': page.nextCursor,
    },
    // Each event exactly as its deliveries sent it.
    body: `[${page.bodies.join(',')}]`,
  };
};

export const handler = httpHandler(listEvents);
