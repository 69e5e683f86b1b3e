import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { InvalidRequestError } from '#domain/commons/errors';
import { DEFAULT_MAX_VALUE_DATE_DAYS } from '#domain/credit-transfers/initiate-credit-transfer';
import { acceptanceReport, batchViewOf } from '#domain/iso20022/batch-view';
import { pain002Document, XML_MEDIA_TYPE } from '#domain/iso20022/pain002';
import {
  type BatchBody,
  type BatchDependencies,
  MAX_BATCH_BYTES,
  submitBatch,
} from '#domain/iso20022/submit-batch';
import { publicUrl, wholeNumberEnv } from '#shared/config';
import { callerOf, headerValue, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import {
  boundedRawBody,
  isJsonMediaType,
  parseJsonObjectText,
  UnsupportedMediaTypeError,
} from '#shared/middleware';
import { batchDependencies } from './batch-dependencies.ts';
import { prefersXml } from './content-negotiation.ts';
import { idempotencyKey, servicerHeaders } from './request-headers.ts';

const XML_BODY = /^(application|text)\/xml\s*(;.*)?$/i;

/** The body as JSON or as a pain.001 text, by its Content-Type; at most MAX_BATCH_BYTES. */
const batchBodyOf = (event: APIGatewayProxyEvent): BatchBody => {
  const contentType = headerValue(event, 'content-type');
  const raw = boundedRawBody(event, MAX_BATCH_BYTES);
  if (raw.trim() === '')
    throw new InvalidRequestError('A request body is required', [{ name: '(body)', reason: 'is required' }]);
  if (contentType !== undefined && XML_BODY.test(contentType)) return { kind: 'xml', text: raw };
  if (contentType !== undefined && isJsonMediaType(contentType))
    return { kind: 'json', value: parseJsonObjectText(raw) };
  throw new UnsupportedMediaTypeError('application/json or application/xml (a pain.001)');
};

export const submitCreditTransferBatch =
  (dependencies: () => BatchDependencies, baseUrl: () => string = publicUrl) =>
  async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const location = baseUrl();
    const { tenant, clientId } = callerOf(event);
    const key = idempotencyKey(event);
    const body = batchBodyOf(event);
    const { batch, paymentIds, replayed } = await submitBatch(dependencies(), {
      tenant,
      clientId,
      ...(key !== undefined && { idempotencyKey: key }),
      servicer: servicerHeaders(event),
      body,
    });
    const headers = {
      Location: `${location}/v1/payments/credit-transfer-batches/${batch.batchId}`,
      Vary: 'Accept',
      ...(replayed && { 'Idempotent-Replayed': 'true' }),
    };
    if (prefersXml(event)) {
      return {
        statusCode: 202,
        headers: { 'Content-Type': XML_MEDIA_TYPE, 'Cache-Control': 'no-store', ...headers },
        body: pain002Document(acceptanceReport(batch)),
      };
    }
    return jsonResponse(
      202,
      { ...batchViewOf(batch), creditTransfers: paymentIds.map((paymentId) => ({ paymentId })) },
      headers,
    );
  };

const withValueDateHorizon = (): BatchDependencies => ({
  ...batchDependencies(),
  maxValueDateDays: wholeNumberEnv('MAX_VALUE_DATE_DAYS', DEFAULT_MAX_VALUE_DATE_DAYS, { min: 0, max: 3650 }),
});

export const handler = httpHandler(submitCreditTransferBatch(withValueDateHorizon));
