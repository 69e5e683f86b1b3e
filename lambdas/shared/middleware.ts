import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  IdempotencyKeyReusedError,
  InvalidRequestError,
  PaymentNotCancellableError,
  PaymentNotFoundError,
} from '#domain/errors';
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
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
};

/** The body as text (decoded if API Gateway sent it base64), refused past MAX_BODY_BYTES. */
export const boundedRawBody = (event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>): string => {
  const raw =
    event.body == null
      ? ''
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString()
        : event.body;
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw new PayloadTooLargeError();
  return raw;
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
    const raw = boundedRawBody(event);
    if (raw.trim() === '') {
      if (options.optional) {
        event.jsonBody = undefined;
        return;
      }
      throw new InvalidRequestError('A JSON request body is required', [
        { name: '(body)', reason: 'is required' },
      ]);
    }
    const contentType = headerValue(event, 'content-type');
    if (contentType === undefined || !isJsonMediaType(contentType)) {
      throw new UnsupportedMediaTypeError('application/json');
    }
    try {
      event.jsonBody = JSON.parse(raw);
    } catch {
      throw new InvalidRequestError('The request body is not valid JSON', [
        { name: '(body)', reason: 'is not valid JSON' },
      ]);
    }
  },
});
