import { type ErrorCode, PROBLEM_CONTENT_TYPE, problemBody } from './problem.ts';

/**
 * The answers API Gateway gives itself (authorizer refusals, unknown routes, throttling),
 * defined once: the CDK stack turns them into Gateway Responses, the local server renders
 * the same bodies and headers.
 */
export type GatewayResponseType =
  | 'API_CONFIGURATION_ERROR'
  | 'BAD_REQUEST_BODY'
  | 'BAD_REQUEST_PARAMETERS'
  | 'INVALID_API_KEY'
  | 'INVALID_SIGNATURE'
  | 'UNAUTHORIZED'
  | 'EXPIRED_TOKEN'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'THROTTLED'
  | 'QUOTA_EXCEEDED'
  | 'RESOURCE_NOT_FOUND'
  | 'WAF_FILTERED'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponseDefinition {
  type: GatewayResponseType;
  /** The status API Gateway answers with, and the body's `status`: always the same number. */
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
    // Both schemes (RFC 9449 7.1): a refused DPoP proof is answered here too, with the same body.
    headers: {
      'WWW-Authenticate': `Bearer realm="${BEARER_REALM}", error="invalid_token", DPoP algs="ES256 PS256 EdDSA", error="invalid_dpop_proof"`,
    },
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
    description: 'The request body is too large',
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
    type: 'RESOURCE_NOT_FOUND',
    statusCode: 404,
    error: 'not_found',
    description: 'No such resource or method',
    headers: {},
  },
  {
    type: 'WAF_FILTERED',
    statusCode: 403,
    error: 'forbidden',
    description: 'The request was refused by the firewall in front of the API',
    headers: {},
  },
  {
    // The authorizer failed (not a refusal of the token): a fault to retry, not a reason to re-authenticate.
    type: 'AUTHORIZER_FAILURE',
    statusCode: 500,
    error: 'internal_error',
    description: 'The access token could not be checked; the request may be retried',
    headers: {},
  },
  {
    type: 'AUTHORIZER_CONFIGURATION_ERROR',
    statusCode: 500,
    error: 'internal_error',
    description: 'The access token could not be checked; the request may be retried',
    headers: {},
  },
  {
    type: 'INTEGRATION_FAILURE',
    statusCode: 502,
    error: 'internal_error',
    description:
      'The service failed to answer; the request may be retried (with the same idempotencyId for an initiation)',
    headers: {},
  },
  {
    type: 'INTEGRATION_TIMEOUT',
    statusCode: 504,
    error: 'internal_error',
    description:
      'The service did not answer in time; the request may be retried (with the same idempotencyId for an initiation)',
    headers: {},
  },
  // The types below are not expected (no request validators or IAM signatures; INVALID_API_KEY only
  // for a tenant whose API key is in no usage plan, docs/rate-limits.md), but each has its own
  // answer so that the fallbacks never stand in for a type API Gateway knows.
  {
    type: 'BAD_REQUEST_BODY',
    statusCode: 400,
    error: 'invalid_request',
    description: 'The request body is not valid',
    headers: {},
  },
  {
    type: 'BAD_REQUEST_PARAMETERS',
    statusCode: 400,
    error: 'invalid_request',
    description: 'The request parameters are not valid',
    headers: {},
  },
  {
    type: 'INVALID_API_KEY',
    statusCode: 403,
    error: 'forbidden',
    description: 'The request is not allowed',
    headers: {},
  },
  {
    type: 'INVALID_SIGNATURE',
    statusCode: 403,
    error: 'forbidden',
    description: 'The request is not allowed',
    headers: {},
  },
  {
    type: 'API_CONFIGURATION_ERROR',
    statusCode: 500,
    error: 'internal_error',
    description: 'An internal error occurred; the request may be retried',
    headers: {},
  },
  // The fallbacks, for a type API Gateway may add later. A Gateway Response body cannot read the
  // status (its template only substitutes variables, none of them the status), so the fallback
  // answers with the status its body names: 400 and 500. Every known type has its own above.
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

/**
 * The 405 a known path answers to a method it does not have, with `Allow` (RFC 9110): on AWS a
 * catch-all method of the path's resource answers it, locally the gateway does.
 */
export const methodNotAllowed = (
  allowed: readonly string[],
): { statusCode: 405; headers: Record<string, string>; body: string } => ({
  statusCode: 405,
  headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', Allow: allowed.join(', ') },
  body: JSON.stringify(
    problemBody(
      405,
      'method_not_allowed',
      `This path does not answer that method; it answers ${allowed.join(', ')}`,
    ),
  ),
});
