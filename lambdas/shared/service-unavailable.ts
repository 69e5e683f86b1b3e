/**
 * A service the request depends on did not answer usably in time (throttled past the retries, a
 * deadline reached, a 5xx, an answer that could not be read). Nothing is known to be wrong with
 * the request: the API answers 503 with Retry-After, and Step Functions retries a workflow task
 * that fails with it (its name is not among those the ASL refuses to retry).
 */
export class ServiceUnavailableError extends Error {
  readonly retryable = true;
  constructor(
    message: string,
    /** The AWS request id of the failed call, when there was an answer. */
    readonly requestId?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ServiceUnavailableError';
  }
}

/** What the API tells a client to wait before it retries. */
export const RETRY_AFTER_SECONDS = 1;
