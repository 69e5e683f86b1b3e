import type { ErrorCode, PaymentStatus } from './types.ts';

/** One field the service named as wrong in a 400 answer. */
export interface InvalidParam {
  name: string;
  reason: string;
}

/** Which call failed: the token endpoint's, or the API's. */
export type CallKind = 'token' | 'api';

/** The request an error is about: which call, its method and its whole URL. */
export interface RequestLine {
  call: CallKind;
  method: string;
  url: string;
}

const callName = ({ call, method, url }: RequestLine) =>
  `${call === 'token' ? 'the token endpoint' : 'the API'} (${method} ${url})`;

/** Base class of every error the SDK throws on purpose. */
export class CreditTransfersError extends Error {
  override name = 'CreditTransfersError';
}

export interface ApiErrorBody {
  error: ErrorCode;
  error_description: string;
  invalidParams?: InvalidParam[];
}

/**
 * The service (or its token endpoint) answered with an error: `error` and `error_description`
 * are its own words, `status` the HTTP status, `call` and `url` the request that was refused.
 */
export class ApiError extends CreditTransfersError {
  override name = 'ApiError';
  readonly status: number;
  readonly error: ErrorCode;
  readonly error_description: string;
  readonly invalidParams?: InvalidParam[];
  /** From a 429's `Retry-After`, when the attempts ran out on it. */
  readonly retryAfterMs?: number;
  readonly requestId: string | undefined;
  readonly call: CallKind;
  readonly method: string;
  readonly url: string;

  constructor(
    status: number,
    body: ApiErrorBody,
    request: RequestLine,
    extra: { retryAfterMs?: number; requestId?: string } = {},
  ) {
    super(`${body.error}: ${body.error_description}`);
    this.status = status;
    this.error = body.error;
    this.error_description = body.error_description;
    if (body.invalidParams !== undefined) this.invalidParams = body.invalidParams;
    if (extra.retryAfterMs !== undefined) this.retryAfterMs = extra.retryAfterMs;
    this.requestId = extra.requestId;
    this.call = request.call;
    this.method = request.method;
    this.url = request.url;
  }

  /** One line naming the refused call: "Refused (404) by the API (GET https://...): not_found: ...". */
  describe(): string {
    const fields = this.invalidParams?.map((param) => `${param.name}: ${param.reason}`).join('; ');
    return `Refused (${this.status}) by ${callName(this)}: ${this.message}${fields ? ` [${fields}]` : ''}`;
  }
}

/**
 * 412 `precondition_failed`: the `ifMatch` sent names a version that is no longer the current one
 * (someone changed it since it was read). Read it again, apply the change, send it with the new ETag.
 */
export class PreconditionFailedError extends ApiError {
  override name = 'PreconditionFailedError';
}

/** 428 `precondition_required`: a change that must name the version it replaces (`ifMatch`) came without one. */
export class PreconditionRequiredError extends ApiError {
  override name = 'PreconditionRequiredError';
}

/** The service could not be reached (or did not answer in time) on any attempt. */
export class NetworkError extends CreditTransfersError {
  override name = 'NetworkError';
  readonly attempts: number;
  readonly call: CallKind;
  readonly method: string;
  readonly url: string;
  constructor(reason: string, attempts: number, request: RequestLine, options?: { cause?: unknown }) {
    const name = callName(request);
    super(
      `${name.charAt(0).toUpperCase()}${name.slice(1)} could not be reached (${reason}) after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}`,
      options,
    );
    this.attempts = attempts;
    this.call = request.call;
    this.method = request.method;
    this.url = request.url;
  }
}

/** `waitForFinalStatus` or `watchStatus` reached `timeoutMs` before the transfer reached a final status. */
export class WaitTimeoutError extends CreditTransfersError {
  override name = 'WaitTimeoutError';
  readonly paymentId: string;
  /** The last status seen; undefined when no report arrived at all. */
  readonly lastStatus: PaymentStatus | undefined;
  constructor(paymentId: string, lastStatus: PaymentStatus | undefined) {
    super(`Transfer ${paymentId} is still ${lastStatus ?? 'unknown'}: no final status before the timeout`);
    this.paymentId = paymentId;
    this.lastStatus = lastStatus;
  }
}

/** The polling job's lock is held by another run that is still alive. */
export class LockedError extends CreditTransfersError {
  override name = 'LockedError';
}

/** The polling job's state file is damaged or belongs to another client or API. */
export class StateFileError extends CreditTransfersError {
  override name = 'StateFileError';
}

/** Why `verifyWebhook` refused a request. */
export type WebhookVerificationFailure =
  /** `webhook-id`, `webhook-timestamp` or `webhook-signature` is missing. */
  | 'missing_headers'
  /** `webhook-timestamp` is not a number of seconds. */
  | 'invalid_timestamp'
  /** Signed more than 5 minutes ago (a replay, or a clock far off). */
  | 'timestamp_too_old'
  /** Signed more than 5 minutes in the future (a clock far off). */
  | 'timestamp_too_new'
  /** No signature matches any of the secrets: another secret, or a body changed on the way. */
  | 'no_matching_signature'
  /** Signed, but not an event: not a JSON object with `id`, `type`, `createdAt` and `data`. */
  | 'invalid_body';

/**
 * A webhook request did not verify: it is not from the service (or not unchanged, or not
 * recent). Answer it with a 4xx and do not act on it.
 */
export class WebhookVerificationError extends CreditTransfersError {
  override name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationFailure;
  constructor(reason: WebhookVerificationFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** The code an answer without an error body of this API stands for, by its HTTP status. */
const codeOfStatus = (status: number): ErrorCode => {
  const codes: Record<number, ErrorCode> = {
    401: 'unauthorized',
    403: 'forbidden',
    404: 'not_found',
    405: 'method_not_allowed',
    408: 'request_timeout',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    429: 'rate_limited',
    503: 'service_unavailable',
  };
  return codes[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
};

/**
 * Turns any error answer into an ApiError. A body that is not one of this API's (a proxy's page,
 * a wrong URL) gets the code of its HTTP status and a description saying so.
 */
export const apiErrorFrom = (
  response: Response,
  body: unknown,
  request: RequestLine,
  retryAfterMs?: number,
): ApiError => {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const ours = typeof fields.error === 'string';
  const error = ours ? (fields.error as ErrorCode) : codeOfStatus(response.status);
  const description =
    ours && typeof fields.error_description === 'string'
      ? fields.error_description
      : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} without an error body of this API (is the URL right?)`;
  const invalidParams = Array.isArray(fields.invalidParams)
    ? (fields.invalidParams as InvalidParam[])
    : undefined;
  const requestId = requestIdOf(response);
  const ErrorClass =
    response.status === 412
      ? PreconditionFailedError
      : response.status === 428
        ? PreconditionRequiredError
        : ApiError;
  return new ErrorClass(
    response.status,
    { error, error_description: description, ...(invalidParams && { invalidParams }) },
    request,
    {
      ...(retryAfterMs !== undefined && { retryAfterMs }),
      ...(requestId !== undefined && { requestId }),
    },
  );
};

/** The request id API Gateway (REST) answers with, as the local runtime does too. */
export const requestIdOf = (response: Response): string | undefined =>
  response.headers.get('x-amzn-RequestId') ?? undefined;
