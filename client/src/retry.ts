import { NetworkError, type RequestLine } from './errors.ts';

export interface RetryOptions {
  /** Attempts per call, the first included (default 4). */
  attempts?: number | undefined;
  /** First backoff; each further one doubles (default 250 ms). */
  baseDelayMs?: number | undefined;
  /** Longest backoff, and the longest `Retry-After` honoured (default 10 s / 60 s). */
  maxDelayMs?: number | undefined;
  maxRetryAfterMs?: number | undefined;
  /** Each attempt's time limit (default 30 s). */
  attemptTimeoutMs?: number | undefined;
}

/** Every retry setting, with its value. */
export type RetrySettings = { [Key in keyof RetryOptions]-?: NonNullable<RetryOptions[Key]> };

export const DEFAULT_RETRY: RetrySettings = {
  attempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
  attemptTimeoutMs: 30_000,
};

/** The retry settings: each option given, the default for the others (an option set to undefined included). */
export const retrySettings = (options: RetryOptions = {}): RetrySettings => ({
  attempts: options.attempts ?? DEFAULT_RETRY.attempts,
  baseDelayMs: options.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs,
  maxDelayMs: options.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs,
  maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULT_RETRY.maxRetryAfterMs,
  attemptTimeoutMs: options.attemptTimeoutMs ?? DEFAULT_RETRY.attemptTimeoutMs,
});

/** Exponential backoff with full jitter: retries of many clients do not arrive together. */
export const backoffDelay = (retry: number, options: RetrySettings, random = Math.random): number =>
  Math.round(random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry));

/** `Retry-After` as seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export const retryAfterMs = (header: string | null, now = Date.now()): number | undefined => {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
};

/** Waits, or rejects with the signal's reason as soon as it aborts. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const isRetryableStatus = (status: number) => status === 429 || status >= 500;

/**
 * Whether a request may be sent again after an attempt the service may have acted on (a 5xx, a
 * timeout, a connection cut after sending). A request that is not (a registration without an
 * idempotency key would register twice) is sent again only when the service surely did not act:
 * a 429, or a connection refused.
 */
export type Repeat = 'always' | 'unless-maybe-done';

const surelyNotSent = (error: unknown): boolean => describeNetworkError(error) === 'ECONNREFUSED';

export interface AttemptContext {
  attempt: number;
  signal: AbortSignal;
}

/**
 * Sends a request up to `attempts` times: again after a network error, an attempt's timeout,
 * a 429 (after its `Retry-After`) or a 5xx. `send` must build the same request every time
 * (same idempotency key), so a retry can never make a second payment. The caller's signal ends
 * everything at once and is never retried.
 */
export const sendWithRetries = async (
  send: (context: AttemptContext) => Promise<Response>,
  options: RetrySettings,
  signal: AbortSignal | undefined,
  request: RequestLine,
  repeat: Repeat = 'always',
): Promise<Response> => {
  const repeatable = repeat === 'always';
  let lastError: unknown;
  let attemptsMade = 0;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    const attemptSignal = signal
      ? AbortSignal.any([signal, AbortSignal.timeout(options.attemptTimeoutMs)])
      : AbortSignal.timeout(options.attemptTimeoutMs);
    let delay: number;
    try {
      const response = await send({ attempt, signal: attemptSignal });
      const retryable = repeatable ? isRetryableStatus(response.status) : response.status === 429;
      if (!retryable || attempt >= options.attempts) return response;
      const retryAfter = retryAfterMs(response.headers.get('Retry-After'));
      // A Retry-After longer than we are willing to wait: the caller hears the 429 now.
      if (retryAfter !== undefined && retryAfter > options.maxRetryAfterMs) return response;
      delay = retryAfter ?? backoffDelay(attempt - 1, options);
      // Not awaited: cancelling one branch of a cloned body waits for the other.
      void response.body?.cancel().catch(() => undefined);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      lastError = error;
      attemptsMade = attempt;
      if (attempt >= options.attempts || !(repeatable || surelyNotSent(error))) break;
      delay = backoffDelay(attempt - 1, options);
    }
    await sleep(delay, signal);
  }
  const reason =
    lastError instanceof Error && lastError.name === 'TimeoutError'
      ? `no answer within ${options.attemptTimeoutMs} ms`
      : describeNetworkError(lastError);
  throw new NetworkError(reason, attemptsMade, request, { cause: lastError });
};

// fetch's TypeError says only "fetch failed"; its cause names the socket error (ECONNRESET, ...).
const describeNetworkError = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  return cause?.code ?? cause?.message ?? error.message;
};
