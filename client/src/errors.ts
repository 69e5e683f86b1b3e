/** One field the service named as wrong in a 400 answer. */
export interface InvalidParam {
  name: string;
  reason: string;
}

/** Base class of every error the SDK throws on purpose. */
export class CreditTransfersError extends Error {
  override name = 'CreditTransfersError';
}

/**
 * The service (or its token endpoint) answered with an error: `error` and `error_description`
 * are its own words, `status` the HTTP status.
 */
export class ApiError extends CreditTransfersError {
  override name = 'ApiError';
  readonly status: number;
  readonly error: string;
  readonly error_description: string;
  readonly invalidParams?: InvalidParam[];
  /** From a 429's `Retry-After`, when the attempts ran out on it. */
  readonly retryAfterSeconds?: number;

  constructor(
    status: number,
    body: { error: string; error_description: string; invalidParams?: InvalidParam[] },
    retryAfterSeconds?: number,
  ) {
    super(`${body.error}: ${body.error_description}`);
    this.status = status;
    this.error = body.error;
    this.error_description = body.error_description;
    if (body.invalidParams !== undefined) this.invalidParams = body.invalidParams;
    if (retryAfterSeconds !== undefined) this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The service could not be reached (or did not answer in time) on any attempt. */
export class NetworkError extends CreditTransfersError {
  override name = 'NetworkError';
  readonly attempts: number;
  constructor(message: string, attempts: number, options?: { cause?: unknown }) {
    super(message, options);
    this.attempts = attempts;
  }
}

/** `waitForFinalStatus` reached its timeout before the transfer reached a final status. */
export class WaitTimeoutError extends CreditTransfersError {
  override name = 'WaitTimeoutError';
  readonly paymentId: string;
  readonly lastStatus: string | undefined;
  constructor(paymentId: string, lastStatus: string | undefined) {
    super(`Transfer ${paymentId} is still ${lastStatus ?? 'unknown'}: no final status before the timeout`);
    this.paymentId = paymentId;
    this.lastStatus = lastStatus;
  }
}

/** Turns any error body into the spec's shape; a body that is not one keeps the HTTP status text. */
export const apiErrorFrom = (response: Response, body: unknown, retryAfterSeconds?: number): ApiError => {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const error = typeof fields.error === 'string' ? fields.error : `http_${response.status}`;
  const description =
    typeof fields.error_description === 'string'
      ? fields.error_description
      : response.statusText || `HTTP ${response.status}`;
  const invalidParams = Array.isArray(fields.invalidParams)
    ? (fields.invalidParams as InvalidParam[])
    : undefined;
  return new ApiError(
    response.status,
    { error, error_description: description, ...(invalidParams && { invalidParams }) },
    retryAfterSeconds,
  );
};
