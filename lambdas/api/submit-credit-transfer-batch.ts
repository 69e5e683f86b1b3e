import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbPaymentControlsStore } from '#adapters/payment-controls/payment-controls-store';
import { DynamoDbPaymentHistory } from '#adapters/payment-controls/payment-history';
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
import {
  type CurrentApprovalRules,
  currentApprovalRules,
  currentLimitRules,
} from '#domain/payment-controls/initiation-controls';
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
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/** Byte order marks of the encodings a pain.001 may not come in (UTF-16 and UTF-32, either order). */
const FOREIGN_BYTE_ORDER_MARKS: readonly [string, number[]][] = [
  ['UTF-32', [0x00, 0x00, 0xfe, 0xff]],
  ['UTF-32', [0xff, 0xfe, 0x00, 0x00]],
  ['UTF-16', [0xfe, 0xff]],
  ['UTF-16', [0xff, 0xfe]],
];

const notUtf8Xml = (name: string, reason: string) =>
  new InvalidRequestError('The XML message is not UTF-8', [{ name, reason }]);

/**
 * A pain.001 is taken in UTF-8 only (xml-input.ts): a charset parameter naming another, or a
 * body that opens with a UTF-16 or UTF-32 byte order mark, is refused with what it is.
 */
const assertUtf8Xml = (event: APIGatewayProxyEvent, contentType: string): void => {
  const charset = CHARSET.exec(contentType)?.[1];
  if (charset !== undefined && charset.toUpperCase() !== 'UTF-8')
    throw notUtf8Xml('Content-Type', 'must name charset=UTF-8 or no charset: only UTF-8 is taken');
  // A body that is not UTF-8 comes base64-encoded; its first bytes are enough.
  if (!event.isBase64Encoded || event.body == null) return;
  const head = Buffer.from(event.body.slice(0, 8), 'base64');
  const mark = FOREIGN_BYTE_ORDER_MARKS.find(([, bytes]) =>
    bytes.every((byte, index) => head[index] === byte),
  );
  if (mark !== undefined)
    throw notUtf8Xml(
      '(body)',
      `must be encoded in UTF-8: it starts with a ${mark[0]} byte order mark; only UTF-8 (with or without a byte order mark) is taken`,
    );
};

/** The body as JSON or as a pain.001 text, by its Content-Type; at most MAX_BATCH_BYTES. */
const batchBodyOf = (event: APIGatewayProxyEvent): BatchBody => {
  const contentType = headerValue(event, 'content-type');
  if (contentType !== undefined && XML_BODY.test(contentType)) assertUtf8Xml(event, contentType);
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

let approvalRules: CurrentApprovalRules | undefined;
/** The tenant's approval rules as the batch reads them (once per batch), built once per container. */
const batchApprovalRules = (): CurrentApprovalRules => {
  approvalRules ??= currentApprovalRules(
    new DynamoDbPaymentControlsStore(documentClient(), tableName()),
    new DynamoDbPaymentHistory(documentClient(), tableName()),
  );
  return approvalRules;
};

let limitRules: BatchDependencies['limitRules'];
/** The tenant's limits as the batch keeps them (read once per batch). */
const batchLimitRules = (): NonNullable<BatchDependencies['limitRules']> => {
  limitRules ??= currentLimitRules(new DynamoDbPaymentControlsStore(documentClient(), tableName()));
  return limitRules;
};

const withValueDateHorizon = (): BatchDependencies => ({
  ...batchDependencies(),
  approvalRules: batchApprovalRules(),
  limitRules: batchLimitRules(),
  maxValueDateDays: wholeNumberEnv('MAX_VALUE_DATE_DAYS', DEFAULT_MAX_VALUE_DATE_DAYS, { min: 0, max: 3650 }),
});

export const handler = httpHandler(submitCreditTransferBatch(withValueDateHorizon));
