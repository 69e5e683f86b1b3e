import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  getCreditTransferStatus as getStatus,
  POLL_AFTER_SECONDS,
} from '#domain/credit-transfers/get-credit-transfer-status';
import { pain002Document, XML_MEDIA_TYPE } from '#domain/iso20022/pain002';
import { transferStatusReport } from '#domain/iso20022/transfer-report';
import { callerOf, headerValue } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { prefersXml } from './content-negotiation.ts';
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
    const xml = prefersXml(event);
    const report = await getStatus(dependencies(), {
      tenant,
      paymentId: event.pathParameters?.paymentId,
      ifNoneMatch: ifNoneMatchOf(event),
      // A pain.002 of the same status, tagged by its own bytes.
      ...(xml && {
        render: (transfer, record) => pain002Document(transferStatusReport(transfer, record)),
      }),
    });
    const headers: Record<string, string> = {
      ETag: report.etag,
      Vary: 'Accept',
      // Stored by the client only, and always revalidated: the status can change at any time.
      'Cache-Control': 'private, no-cache',
      ...(!report.final && { 'Retry-After': String(POLL_AFTER_SECONDS) }),
    };
    if (!report.changed) return { statusCode: 304, headers, body: '' };
    return {
      statusCode: 200,
      headers: { 'Content-Type': xml ? XML_MEDIA_TYPE : 'application/json', ...headers },
      body: report.body,
    };
  };

export const handler = httpHandler(getCreditTransferStatus(apiDependencies));
