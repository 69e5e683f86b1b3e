import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  getCreditTransferStatus as getStatus,
  POLL_AFTER_SECONDS,
} from '#domain/credit-transfers/get-credit-transfer-status';
import { callerOf, headerValue } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { type ApiDependencies, apiDependencies } from './dependencies.ts';
import { servicerHeaders } from './request-headers.ts';

/** Every If-None-Match value sent, as one list (RFC 9110 5.3: repeated list headers combine). */
const ifNoneMatchOf = (event: APIGatewayProxyEvent): string | undefined => {
  const values = Object.entries(event.multiValueHeaders ?? {})
    .filter(([name]) => name.toLowerCase() === 'if-none-match')
    .flatMap(([, list]) => list ?? []);
  return values.length > 0 ? values.join(', ') : headerValue(event, 'if-none-match');
};

export const getCreditTransferStatus =
  (dependencies: () => ApiDependencies) =>
  async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const { tenant } = callerOf(event);
    servicerHeaders(event);
    const report = await getStatus(dependencies(), {
      tenant,
      paymentId: event.pathParameters?.paymentId,
      ifNoneMatch: ifNoneMatchOf(event),
    });
    const headers: Record<string, string> = {
      ETag: report.etag,
      // Stored by the client only, and always revalidated: the status can change at any time.
      'Cache-Control': 'private, no-cache',
      ...(!report.final && { 'Retry-After': String(POLL_AFTER_SECONDS) }),
    };
    if (!report.changed) return { statusCode: 304, headers, body: '' };
    return {
      statusCode: 200,
      headers: { 'Content-Type': 'application/json', ...headers },
      body: report.body,
    };
  };

export const handler = httpHandler(getCreditTransferStatus(apiDependencies));
