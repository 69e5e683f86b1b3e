import type { APIGatewayProxyResult } from 'aws-lambda';
import type { InvalidParam } from '#domain/commons/errors';

/**
 * Every error the service answers has one body: the spec's `error` and `error_description`,
 * which is also an RFC 9457 problem (`type`, `title`, `status`, `detail`).
 */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'payment_not_cancellable'
  | 'approval_already_decided'
  | 'payment_not_pending'
  | 'precondition_failed'
  | 'precondition_required'
  | 'webhook_endpoint_disabled'
  | 'too_many_webhook_endpoints'
  | 'payload_too_large'
  | 'request_timeout'
  | 'request_header_fields_too_large'
  | 'unsupported_media_type'
  | 'idempotency_key_reused'
  | 'message_id_reused'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable'
  // RFC 6749 section 5.2, for the token endpoint.
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  // RFC 9449 7.1 and 8, for DPoP proofs.
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  431: 'Request Header Fields Too Large',
  422: 'Unprocessable Content',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  error: ErrorCode;
  error_description: string;
  invalidParams?: InvalidParam[];
}

/** Bounds of `invalidParams`, as the OpenAPI document states them: a hostile body cannot inflate the answer. */
export const MAX_INVALID_PARAMS = 100;
export const MAX_INVALID_PARAM_TEXT = 1024;

const bounded = (text: string): string =>
  text.length > MAX_INVALID_PARAM_TEXT ? `${text.slice(0, MAX_INVALID_PARAM_TEXT - 1)}…` : text;

export const problemBody = (
  status: number,
  error: ErrorCode,
  description: string,
  invalidParams?: InvalidParam[],
): ProblemBody => ({
  type: `urn:problem-type:credit-transfers:${error}`,
  title: TITLES[status] ?? 'Error',
  status,
  detail: description,
  error,
  error_description: description,
  ...(invalidParams &&
    invalidParams.length > 0 && {
      invalidParams: invalidParams
        .slice(0, MAX_INVALID_PARAMS)
        .map(({ name, reason }) => ({ name: bounded(name), reason: bounded(reason) })),
    }),
});

export const problemResponse = (
  status: number,
  error: ErrorCode,
  description: string,
  options: { invalidParams?: InvalidParam[]; headers?: Record<string, string> } = {},
): APIGatewayProxyResult => ({
  statusCode: status,
  headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...options.headers },
  body: JSON.stringify(problemBody(status, error, description, options.invalidParams)),
});
