import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  ApprovalConflictError,
  BatchTooLargeError,
  ForbiddenError,
  IdempotencyKeyReusedError,
  InvalidRequestError,
  MessageIdReusedError,
  NotFoundError,
  PaymentNotCancellableError,
  PaymentNotFoundError,
  PreconditionFailedError,
  PreconditionRequiredError,
  WebhookConflictError,
} from '#domain/commons/errors';
import { firstDuplicateKey } from './duplicate-keys.ts';
import { headerValue, SINGLE_VALUE_HEADERS, singleHeaderValue } from './http-event.ts';
import { logger } from './logger.ts';
import { problemResponse } from './problem.ts';
import { InsufficientScopeError, insufficientScopeChallenge } from './required-scope.ts';
import { RETRY_AFTER_SECONDS, ServiceUnavailableError } from './service-unavailable.ts';

export const MAX_BODY_BYTES = 64 * 1024;

export class PayloadTooLargeError extends Error {
  constructor(limit = MAX_BODY_BYTES) {
    super(
      limit >= 1024 * 1024
        ? `The request body is larger than ${limit / (1024 * 1024)} MB`
        : `The request body is larger than ${limit / 1024} KiB`,
    );
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
  if (error instanceof InsufficientScopeError) {
    return problemResponse(403, 'insufficient_scope', error.message, {
      headers: { 'WWW-Authenticate': insufficientScopeChallenge(error) },
    });
  }
  if (error instanceof ForbiddenError) return problemResponse(403, 'forbidden', error.message);
  if (error instanceof ApprovalConflictError) return problemResponse(409, error.code, error.message);
  if (error instanceof PaymentNotFoundError) return problemResponse(404, 'not_found', error.message);
  if (error instanceof NotFoundError) return problemResponse(404, 'not_found', error.message);
  if (error instanceof WebhookConflictError) return problemResponse(409, error.code, error.message);
  if (error instanceof PaymentNotCancellableError) {
    return problemResponse(409, 'payment_not_cancellable', error.message);
  }
  if (error instanceof PreconditionFailedError)
    return problemResponse(412, 'precondition_failed', error.message);
  if (error instanceof PreconditionRequiredError) {
    return problemResponse(428, 'precondition_required', error.message);
  }
  if (error instanceof IdempotencyKeyReusedError)
    return problemResponse(422, 'idempotency_key_reused', error.message);
  if (error instanceof MessageIdReusedError) return problemResponse(422, 'message_id_reused', error.message);
  if (error instanceof PayloadTooLargeError || error instanceof BatchTooLargeError)
    return problemResponse(413, 'payload_too_large', error.message);
  if (error instanceof UnsupportedMediaTypeError) {
    return problemResponse(415, 'unsupported_media_type', error.message);
  }
  if (error instanceof ServiceUnavailableError) {
    // Logged with the AWS request id; the client is told only to come back.
    logger.error('A service the request needs is unavailable', { error, requestId: error.requestId });
    return problemResponse(
      503,
      'service_unavailable',
      'The service is briefly unavailable; retry the request',
      {
        headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      },
    );
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

export const isJsonMediaType = (contentType: string): boolean => {
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  const isJson = type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
  // JSON is UTF-8 (RFC 8259): a body declared in another charset would be misread.
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length);
  return isJson && (charset === undefined || charset.replaceAll('"', '') === 'utf-8');
};

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Text that cannot be stored exactly as sent: a lone UTF-16 surrogate (what `\ud800` in JSON
 * becomes), or U+FFFD, the mark of bytes that were not UTF-8 and were replaced on the way
 * (API Gateway and Node decode `%FF` in a query so).
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const isUnfaithfulText = (text: string): boolean =>
  text.includes('\uFFFD') || LONE_SURROGATE.test(text);

/**
 * The path of the first string (key or value) in a parsed JSON value that is not faithful text.
 * It walks with its own stack, not by recursion: however deep a value, no call stack runs out.
 */
export const firstUnfaithfulString = (value: unknown): string | undefined => {
  const pending: [path: string, value: unknown][] = [['', value]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [path, item] = next;
    if (typeof item === 'string') {
      if (isUnfaithfulText(item)) return path || '(body)';
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    const children: [string, unknown][] = [];
    if (Array.isArray(item)) {
      for (const [index, child] of item.entries()) children.push([`${path}[${index}]`, child]);
    } else {
      for (const [key, child] of Object.entries(item)) {
        const childPath = path === '' ? key : `${path}.${key}`;
        if (isUnfaithfulText(key)) return childPath;
        children.push([childPath, child]);
      }
    }
    // Last pushed is first taken: reversed, the first field is looked at first.
    pending.push(...children.reverse());
  }
  return undefined;
};

const notFaithful = (message: string, name: string) =>
  new InvalidRequestError(message, [
    { name, reason: 'is not valid Unicode text (a lone surrogate or bytes that are not UTF-8)' },
  ]);

/**
 * Refuses what a handler could misread: a header that may come once sent twice, and query or
 * path values that are not faithful text. On AWS the handler is where this can be seen: API
 * Gateway has already chosen one of two headers for the authorizer and decoded the query.
 */
export const unambiguousRequest = <E extends APIGatewayProxyEvent = APIGatewayProxyEvent>(): MiddlewareObj<
  E,
  APIGatewayProxyResult
> => ({
  before: async ({ event }) => {
    for (const name of SINGLE_VALUE_HEADERS) singleHeaderValue(event, name);
    for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
      if (isUnfaithfulText(name)) throw notFaithful('A query parameter is not valid', name);
      if ((values ?? []).some(isUnfaithfulText)) throw notFaithful('A query parameter is not valid', name);
    }
    for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
      if (isUnfaithfulText(name) || (value !== undefined && isUnfaithfulText(value)))
        throw notFaithful('A query parameter is not valid', name);
    }
    for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
      if (value !== undefined && isUnfaithfulText(value))
        throw notFaithful('A path parameter is not valid', name);
    }
  },
});

const notUtf8 = () =>
  new InvalidRequestError('The request body is not valid UTF-8', [
    { name: '(body)', reason: 'is not valid UTF-8' },
  ]);

/**
 * Only an identity-encoded body is read: a gzip or br body read as JSON would be garbage, and
 * decoding one opens the door to bodies that inflate far past MAX_BODY_BYTES.
 */
const assertIdentityEncoding = (event: Pick<APIGatewayProxyEvent, 'headers'>): void => {
  const encodings = (headerValue(event, 'content-encoding') ?? '')
    .split(',')
    .map((encoding) => encoding.trim().toLowerCase())
    .filter((encoding) => encoding !== '' && encoding !== 'identity');
  if (encodings.length > 0) throw new UnsupportedMediaTypeError('sent without a Content-Encoding (identity)');
};

/**
 * The body as text, refused when it is content-encoded, past MAX_BODY_BYTES or when it is not
 * UTF-8. A U+FFFD in it is the mark of bytes already replaced on the way: a value that cannot
 * be stored exactly as sent.
 */
export const boundedRawBody = (
  event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'> &
    Partial<Pick<APIGatewayProxyEvent, 'headers'>>,
  limit = MAX_BODY_BYTES,
): string => {
  if (event.body == null || event.body === '') return '';
  assertIdentityEncoding({ headers: event.headers ?? {} });
  const bytes = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body);
  if (bytes.length > limit) throw new PayloadTooLargeError(limit);
  let raw: string;
  try {
    raw = event.isBase64Encoded ? strictUtf8.decode(bytes) : event.body;
  } catch {
    throw notUtf8();
  }
  if (isUnfaithfulText(raw)) throw notUtf8();
  return raw;
};

/**
 * How deep objects and arrays nest in a JSON text (brackets inside strings do not count), read
 * in one pass without recursion: any text, valid JSON or not, is measured without a stack to overflow.
 */
export const jsonNestingDepth = (text: string): number => {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let position = 0; position < text.length; position++) {
    const character = text[position];
    if (inString) {
      if (character === '\\') position++;
      else if (character === '"') inString = false;
    } else if (character === '"') inString = true;
    else if (character === '{' || character === '[') deepest = Math.max(deepest, ++depth);
    else if (character === '}' || character === ']') depth--;
  }
  return deepest;
};

/**
 * The deepest nesting a body may have. A credit transfer nests 6 levels at most
 * (debtor.agent.identifiers[0].number); the rest is margin. Deeper is refused before JSON.parse,
 * so no check that walks a body ever sees more.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * JSON.parse, refusing a body nested more than MAX_JSON_DEPTH levels, a key repeated in one object (two amounts on a payment must not become
 * one) and a string that is not faithful text: `"\ud800"` parses to a lone surrogate that no
 * filter could ever match and no other system could store.
 */
export const parseJsonObjectText = (raw: string): unknown => {
  if (jsonNestingDepth(raw) > MAX_JSON_DEPTH) {
    throw new InvalidRequestError('The request body is nested too deeply', [
      { name: '(body)', reason: `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep` },
    ]);
  }
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
  const unfaithful = firstUnfaithfulString(parsed);
  if (unfaithful !== undefined)
    throw notFaithful('The request body holds text that is not valid', unfaithful);
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
