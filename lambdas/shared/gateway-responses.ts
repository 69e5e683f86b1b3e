import { type ErrorCode, PROBLEM_CONTENT_TYPE, problemBody } from './problem.ts';

/**
 * The answers API Gateway gives itself (authorizer refusals, unknown routes, throttling),
 * defined once: the CDK stack turns them into Gateway Responses, the local server renders
 * the same bodies and headers.
 */
export type GatewayResponseType =
  | 'UNAUTHORIZED'
  | 'EXPIRED_TOKEN'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'THROTTLED'
  | 'QUOTA_EXCEEDED'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponseDefinition {
  type: GatewayResponseType;
  statusCode: number;
  error: ErrorCode;
  description: string;
  headers: Record<string, string>;
}

const BEARER_REALM = 'credit-transfers';

export const GATEWAY_RESPONSES: readonly GatewayResponseDefinition[] = [
  {
    type: 'UNAUTHORIZED',
    statusCode: 401,
    error: 'unauthorized',
    description: 'The access token is missing, malformed, expired or not valid for this API',
    headers: { 'WWW-Authenticate': `Bearer realm="${BEARER_REALM}", error="invalid_token"` },
  },
  {
    type: 'EXPIRED_TOKEN',
    statusCode: 401,
    error: 'invalid_token',
    description: 'The access token has expired',
    headers: { 'WWW-Authenticate': `Bearer realm="${BEARER_REALM}", error="invalid_token"` },
  },
  {
    type: 'ACCESS_DENIED',
    statusCode: 403,
    error: 'insufficient_scope',
    description: 'The access token does not carry the scope this operation requires',
    headers: { 'WWW-Authenticate': `Bearer realm="${BEARER_REALM}", error="insufficient_scope"` },
  },
  {
    // API Gateway answers an unknown path or method with this type; to a client it is a 404.
    type: 'MISSING_AUTHENTICATION_TOKEN',
    statusCode: 404,
    error: 'not_found',
    description: 'No such resource or method',
    headers: {},
  },
  {
    type: 'REQUEST_TOO_LARGE',
    statusCode: 413,
    error: 'payload_too_large',
    description: 'The request body is larger than 64 KiB',
    headers: {},
  },
  {
    type: 'UNSUPPORTED_MEDIA_TYPE',
    statusCode: 415,
    error: 'unsupported_media_type',
    description: 'The request body must be application/json',
    headers: {},
  },
  {
    type: 'THROTTLED',
    statusCode: 429,
    error: 'rate_limited',
    description: 'Too many requests; retry after the number of seconds in Retry-After',
    headers: { 'Retry-After': '1' },
  },
  {
    type: 'QUOTA_EXCEEDED',
    statusCode: 429,
    error: 'rate_limited',
    description: 'The request quota is used up; retry after the number of seconds in Retry-After',
    headers: { 'Retry-After': '60' },
  },
  {
    type: 'DEFAULT_4XX',
    statusCode: 400,
    error: 'invalid_request',
    description: 'The request could not be accepted',
    headers: {},
  },
  {
    type: 'DEFAULT_5XX',
    statusCode: 500,
    error: 'internal_error',
    description: 'An internal error occurred; the request may be retried',
    headers: {},
  },
];

export const gatewayResponse = (type: GatewayResponseType): GatewayResponseDefinition => {
  const found = GATEWAY_RESPONSES.find((response) => response.type === type);
  if (!found) throw new Error(`No gateway response ${type}`);
  return found;
};

/** The body a gateway response carries, as JSON text. */
export const gatewayResponseBody = (definition: GatewayResponseDefinition): string =>
  JSON.stringify(problemBody(definition.statusCode, definition.error, definition.description));

export const gatewayResponseHeaders = (definition: GatewayResponseDefinition): Record<string, string> => ({
  'Content-Type': PROBLEM_CONTENT_TYPE,
  'Cache-Control': 'no-store',
  ...definition.headers,
});
