import { randomUUID } from 'node:crypto';
import createClient, { type Client } from 'openapi-fetch';
import type { operations, paths } from './api-types.ts';
import { apiErrorFrom, WaitTimeoutError } from './errors.ts';
import { DEFAULT_RETRY, type RetryOptions, retryAfterMs, sendWithRetries, sleep } from './retry.ts';
import { secondsOf, TokenManager } from './token-manager.ts';

type JsonBody<T> = T extends { content: { 'application/json': infer B } } ? B : never;

export type CreditTransferRequest = JsonBody<operations['initiateCreditTransfer']['requestBody']>;
export type CreditTransfer = JsonBody<operations['initiateCreditTransfer']['responses'][202]>;
export type StatusReport = JsonBody<operations['getCreditTransferStatus']['responses'][200]>;
export type CancellationRequest = NonNullable<
  JsonBody<NonNullable<operations['cancelCreditTransfer']['requestBody']>>
>;
export type ListFilters = Omit<
  NonNullable<operations['listCreditTransfers']['parameters']['query']>,
  'cursor' | 'limit'
>;
export type PaymentStatus = StatusReport['status'];

/** Statuses a transfer never leaves. */
export const FINAL_STATUSES: readonly PaymentStatus[] = [
  'AcceptedSettlementCompleted',
  'Rejected',
  'Cancelled',
];
export const isFinal = (status: PaymentStatus | undefined) =>
  status !== undefined && FINAL_STATUSES.includes(status);

export interface CreditTransfersClientOptions {
  /** The API's base URL, e.g. https://api.example.com (the paths start with /v1). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Default: the base URL's /oauth/token. */
  tokenUrl?: string;
  scope?: string;
  retry?: RetryOptions;
  fetch?: typeof globalThis.fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Each attempt's time limit in milliseconds (default 30 s). */
  timeoutMs?: number;
  servicerId?: string;
  servicerBranchId?: string;
}

export interface StatusResult {
  /** false when the service answered 304 to `ifNoneMatch`: the report has not changed. */
  modified: boolean;
  report: StatusReport | undefined;
  etag: string | undefined;
}

export interface ListPage {
  items: CreditTransfer[];
  /** Empty on the last page. */
  cursor: string;
  total: number | undefined;
}

export interface WaitOptions {
  /** Give up after this many milliseconds (WaitTimeoutError). Default: wait as long as it takes. */
  timeout?: number;
  signal?: AbortSignal;
  /** First pause between polls (default 500 ms); each pause grows by half up to `maxIntervalMs`. */
  initialIntervalMs?: number;
  maxIntervalMs?: number;
}

interface ResultShape<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

const servicerHeaders = (options: CallOptions) => ({
  ...(options.servicerId !== undefined && { servicerId: options.servicerId }),
  ...(options.servicerBranchId !== undefined && { servicerBranchId: options.servicerBranchId }),
});

/**
 * The credit transfer API, typed from its OpenAPI document. Every call carries a bearer token
 * (renewed before expiry, and once after a 401), is retried on network errors, 429 and 5xx with
 * backoff, and has a timeout and an optional AbortSignal. Initiation and cancellation always send
 * an `idempotencyId` (the caller's, or a new UUID) and every retry reuses it: a retry never pays twice.
 */
export class CreditTransfersClient {
  readonly tokens: TokenManager;
  readonly #api: Client<paths>;
  readonly #retry: Required<RetryOptions>;
  readonly #fetch: typeof globalThis.fetch;

  constructor(options: CreditTransfersClientOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    const fetchImpl = options.fetch ?? globalThis.fetch;
    this.#fetch = fetchImpl;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.tokens = new TokenManager({
      tokenUrl: options.tokenUrl ?? `${baseUrl}/oauth/token`,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      ...(options.scope !== undefined && { scope: options.scope }),
      fetch: fetchImpl,
      retry: this.#retry,
    });
    this.#api = createClient<paths>({ baseUrl });
  }

  /** Authorizes and retries one request; openapi-fetch hands every call through here. */
  async #send(request: Request, timeoutMs: number): Promise<Response> {
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const headers = new Headers(request.headers);
    // The caller's signal travels on the Request; openapi-fetch gives every Request one.
    const callerSignal = request.signal;
    let renewedAfter401 = false;
    for (;;) {
      const token = await this.tokens.accessToken(callerSignal);
      const response = await sendWithRetries(
        ({ signal }) => {
          const attemptHeaders = new Headers(headers);
          attemptHeaders.set('Authorization', `Bearer ${token}`);
          return this.#fetch(request.url, { method: request.method, headers: attemptHeaders, body, signal });
        },
        { ...this.#retry, timeoutMs },
        callerSignal,
      );
      if (response.status !== 401 || renewedAfter401) return response;
      // Refused token (expired early, key rotated): one new token, one more try.
      renewedAfter401 = true;
      this.tokens.invalidate(token);
      // Not awaited: cancelling one branch of a cloned body waits for the other.
      void response.body?.cancel().catch(() => undefined);
    }
  }

  #init(options: CallOptions) {
    const timeoutMs = options.timeoutMs ?? this.#retry.timeoutMs;
    return {
      ...(options.signal !== undefined && { signal: options.signal }),
      fetch: (request: Request) => this.#send(request, timeoutMs),
    };
  }

  #unwrap<T>(result: ResultShape<T>): T {
    if (result.error !== undefined || !result.response.ok) {
      const { response } = result;
      throw apiErrorFrom(
        response,
        result.error,
        secondsOf(retryAfterMs(response.headers.get('Retry-After'))),
      );
    }
    return result.data as T;
  }

  /** Initiates a transfer (202). Without `idempotencyId` a new one is made, so retries stay safe. */
  async initiate(
    transfer: CreditTransferRequest,
    options: CallOptions & { idempotencyId?: string } = {},
  ): Promise<CreditTransfer> {
    const init = this.#init(options);
    return this.#unwrap(
      await this.#api.POST('/v1/payments/credit-transfers', {
        ...init,
        params: {
          header: { idempotencyId: options.idempotencyId ?? randomUUID(), ...servicerHeaders(options) },
        },
        body: transfer,
      }),
    );
  }

  /** The status report; with `ifNoneMatch` (a previous `etag`) an unchanged report answers `modified: false`. */
  async status(
    paymentId: string,
    options: CallOptions & { ifNoneMatch?: string } = {},
  ): Promise<StatusResult> {
    const init = this.#init(options);
    const result = await this.#api.GET('/v1/payments/credit-transfers/{paymentId}/status', {
      ...init,
      params: { path: { paymentId }, header: servicerHeaders(options) },
      headers: {
        ...(options.ifNoneMatch !== undefined && { 'If-None-Match': options.ifNoneMatch }),
      },
    });
    const etag = result.response.headers.get('ETag') ?? undefined;
    if (result.response.status === 304)
      return { modified: false, report: undefined, etag: etag ?? options.ifNoneMatch };
    return { modified: true, report: this.#unwrap(result), etag };
  }

  /** Requests a cancellation (202). Without `idempotencyId` a new one is made, so retries stay safe. */
  async cancel(
    paymentId: string,
    request: CancellationRequest = {},
    options: CallOptions & { idempotencyId?: string } = {},
  ): Promise<CreditTransfer> {
    const init = this.#init(options);
    return this.#unwrap(
      await this.#api.POST('/v1/payments/credit-transfers/{paymentId}/cancellation', {
        ...init,
        params: {
          path: { paymentId },
          header: { idempotencyId: options.idempotencyId ?? randomUUID(), ...servicerHeaders(options) },
        },
        body: request,
      }),
    );
  }

  /** One page of the list, newest first. */
  async listPage(
    filters: ListFilters = {},
    options: CallOptions & { cursor?: string; limit?: number } = {},
  ): Promise<ListPage> {
    const init = this.#init(options);
    const result = await this.#api.GET('/v1/payments/credit-transfers', {
      ...init,
      params: {
        query: {
          ...filters,
          ...(options.cursor !== undefined && { cursor: options.cursor }),
          ...(options.limit !== undefined && { limit: String(options.limit) }),
        },
        header: servicerHeaders(options),
      },
    });
    const items = this.#unwrap(result) as CreditTransfer[];
    const total = result.response.headers.get('Pagination-Total');
    return {
      items,
      cursor: result.response.headers.get('Pagination-Cursor') ?? '',
      total: total === null || total === '' ? undefined : Number(total),
    };
  }

  /** Every page of the list (the cursor sent back with the same filters), page by page. */
  async *pages(
    filters: ListFilters = {},
    options: CallOptions & { limit?: number } = {},
  ): AsyncGenerator<ListPage> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage(filters, { ...options, ...(cursor !== undefined && { cursor }) });
      yield page;
      cursor = page.cursor;
    } while (cursor !== '');
  }

  /** Every transfer matching the filters, newest first, across all pages. */
  async *list(
    filters: ListFilters = {},
    options: CallOptions & { limit?: number } = {},
  ): AsyncGenerator<CreditTransfer> {
    for await (const page of this.pages(filters, options)) yield* page.items;
  }

  /**
   * Yields the status report each time it changes (the first one too), with conditional requests,
   * until a final status; polls back off from `initialIntervalMs` to `maxIntervalMs`.
   */
  async *watchStatus(
    paymentId: string,
    options: WaitOptions & CallOptions = {},
  ): AsyncGenerator<StatusReport> {
    const deadline = options.timeout === undefined ? undefined : AbortSignal.timeout(options.timeout);
    const signal = AbortSignal.any([options.signal, deadline].filter((s) => s !== undefined));
    let interval = options.initialIntervalMs ?? 500;
    const maxInterval = options.maxIntervalMs ?? 5_000;
    let etag: string | undefined;
    let last: StatusReport | undefined;
    try {
      for (;;) {
        const result = await this.status(paymentId, {
          ...options,
          signal,
          ...(etag !== undefined && { ifNoneMatch: etag }),
        });
        etag = result.etag;
        const report = result.report;
        if (report !== undefined && !sameReport(report, last)) {
          last = report;
          yield report;
          if (isFinal(report.status)) return;
        }
        // Full jitter around the interval keeps many watchers from polling in step.
        await sleep(interval / 2 + Math.random() * (interval / 2), signal);
        interval = Math.min(maxInterval, interval * 1.5);
      }
    } catch (error) {
      if (deadline?.aborted && !options.signal?.aborted) throw new WaitTimeoutError(paymentId, last?.status);
      throw error;
    }
  }

  /** Polls until the transfer reaches a final status and returns that report. */
  async waitForFinalStatus(
    paymentId: string,
    options: WaitOptions & CallOptions = {},
  ): Promise<StatusReport> {
    let last: StatusReport | undefined;
    for await (const report of this.watchStatus(paymentId, options)) last = report;
    // watchStatus only ends at a final status.
    return last as StatusReport;
  }
}

const sameReport = (a: StatusReport, b: StatusReport | undefined) =>
  b !== undefined && a.status === b.status && a.statusReason === b.statusReason && a.date === b.date;
