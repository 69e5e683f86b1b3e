import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  IdempotencyKeyReusedError,
  InvalidRequestError,
  PaymentNotCancellableError,
  PaymentNotFoundError,
} from '#domain/errors';
import { firstDuplicateKey } from './duplicate-keys.ts';
import { headerValue } from './http-event.ts';
import { logger } from './logger.ts';
import { problemResponse } from './problem.ts';

export const MAX_BODY_BYTES = 64 * 1024;

export class PayloadTooLargeError extends Error {
  constructor() {
    super(`The request body is larger than ${MAX_BODY_BYTES / 1024} KiB`);
    this.name = 'PayloadTooLargeError';
  }
}

export class UnsupportedMediaTypeError extends Error {
  constructor(expected: string) {
    super(`The request body must be ${expected}`);
    this.name = 'UnsupportedMediaTypeError';
  }
}

/** Maps every error to its problem response; anything unexpected becomes a 500 that leaks nothing. */
export const toProblemResponse = (error: unknown): APIGatewayProxyResult => {
  if (error instanceof InvalidRequestError) {
    return problemResponse(400, 'invalid_request', error.message, { invalidParams: error.invalidParams });
  }
  if (error instanceof PaymentNotFoundError) return problemResponse(404, 'not_found', error.message);
  if (error instanceof PaymentNotCancellableError) {
    return problemResponse(409, 'payment_not_cancellable', error.message);
  }
  if (error instanceof IdempotencyKeyReusedError)
    return problemResponse(422, 'idempotency_key_reused', error.message);
  if (error instanceof PayloadTooLargeError) return problemResponse(413, 'payload_too_large', error.message);
  if (error instanceof UnsupportedMediaTypeError) {
    return problemResponse(415, 'unsupported_media_type', error.message);
  }
  logger.error('Unhandled error', { error: error as Error });
  return problemResponse(500, 'internal_error', 'An internal error occurred; the request may be retried');
};

/** Always the last middleware to run on the way out. */
export const problemResponses = <E = APIGatewayProxyEvent>(): MiddlewareObj<E, APIGatewayProxyResult> => ({
  onError: async (request) => {
    request.response = toProblemResponse(request.error);
  },
});

export type JsonEvent = APIGatewayProxyEvent & { jsonBody: unknown };

const isJsonMediaType = (contentType: string): boolean => {
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  const isJson = type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
  // JSON is UTF-8 (RFC 8259): a body declared in another charset would be misread.
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length);
  return isJson && (charset === undefined || charset.replaceAll('"', '') === 'utf-8');
};

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

const notUtf8 = () =>
  new InvalidRequestError('The request body is not valid UTF-8', [
    { name: '(body)', reason: 'is not valid UTF-8' },
  ]);

/**
 * The body as text, refused past MAX_BODY_BYTES or when it is not UTF-8. A U+FFFD in it is the
 * mark of bytes already replaced on the way: a value that cannot be stored exactly as sent.
 */
export const boundedRawBody = (event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>): string => {
  if (event.body == null) return '';
  const bytes = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body);
  if (bytes.length > MAX_BODY_BYTES) throw new PayloadTooLargeError();
  let raw: string;
  try {
    raw = event.isBase64Encoded ? strictUtf8.decode(bytes) : event.body;
  } catch {
    throw notUtf8();
  }
  if (raw.includes('\uFFFD')) throw notUtf8();
  return raw;
};

/** JSON.parse, refusing a key repeated in one object: two amounts on a payment must not become one. */
export const parseJsonObjectText = (raw: string): unknown => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new InvalidRequestError('The request body is not valid JSON', [
      { name: '(body)', reason: 'is not valid JSON' },
    ]);
  }
  const duplicate = firstDuplicateKey(raw);
  if (duplicate !== undefined) {
    throw new InvalidRequestError('The request body repeats a field', [
      { name: duplicate, reason: 'appears more than once' },
    ]);
  }
  return parsed;
};

/**
 * Checks size, media type and JSON syntax of the body, then sets `event.jsonBody`.
 * With `optional`, an absent or empty body is `undefined`.
 */
export const jsonBody = (
  options: { optional?: boolean } = {},
): MiddlewareObj<JsonEvent, APIGatewayProxyResult> => ({
  before: async (request) => {
    const { event } = request;
    const absent = () => {
      if (options.optional) {
        event.jsonBody = undefined;
        return;
      }
      throw new InvalidRequestError('A JSON request body is required', [
        { name: '(body)', reason: 'is required' },
      ]);
    };
    if (event.body == null || event.body === '') return absent();
    const contentType = headerValue(event, 'content-type');
    if (contentType === undefined || !isJsonMediaType(contentType)) {
      throw new UnsupportedMediaTypeError('application/json');
    }
    const raw = boundedRawBody(event);
    if (raw.trim() === '') return absent();
    event.jsonBody = parseJsonObjectText(raw);
  },
});
