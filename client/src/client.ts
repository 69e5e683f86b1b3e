import { randomUUID } from 'node:crypto';
import createClient, { type Client } from 'openapi-fetch';
import { type ApiCaller, type ResultShape, responseInfo } from './api-caller.ts';
import type { paths } from './api-types.ts';
import { apiErrorFrom, type RequestLine, WaitTimeoutError } from './errors.ts';
import {
  asksForNonce,
  type DpopOption,
  DpopProver,
  type PrivateKeyJwtOptions,
} from './key-authentication.ts';
import { PaymentControlsCalls } from './payment-controls.ts';
import {
  type Repeat,
  type RetryOptions,
  type RetrySettings,
  retryAfterMs,
  retrySettings,
  sendWithRetries,
  sleep,
} from './retry.ts';
import { TokenManager } from './token-manager.ts';
import type {
  ApprovalDecision,
  ApprovalDecisionRequest,
  BatchApprovalResult,
  BatchFilters,
  BatchPage,
  CancellationRequest,
  CreditTransfer,
  CreditTransferAnswer,
  CreditTransferBatch,
  CreditTransferBatchAccepted,
  CreditTransferBatchAnswer,
  CreditTransferBatchRequest,
  CreditTransferBatchSummary,
  CreditTransferRequest,
  FinalStatusReport,
  ListFilters,
  ListPage,
  NotModifiedResult,
  PaymentStatus,
  StatusReport,
  StatusResult,
} from './types.ts';
import { Events, WebhookEndpoints } from './webhooks.ts';

/** Every status, in lifecycle order (the generated type's members, checked at compile time). */
export const PAYMENT_STATUSES = [
  'Pending',
  'Received',
  'AcceptedTechnicalValidation',
  'AcceptedCustomerProfile',
  'AcceptedSettlementInProcess',
  'AcceptedSettlementCompleted',
  'Rejected',
  'Cancelled',
] as const satisfies readonly PaymentStatus[];
type MissingStatus = Exclude<PaymentStatus, (typeof PAYMENT_STATUSES)[number]>;
const everyStatusListed: [MissingStatus] extends [never] ? true : MissingStatus = true;
void everyStatusListed;

/** Statuses a transfer never leaves. */
export const FINAL_STATUSES: readonly PaymentStatus[] = [
  'AcceptedSettlementCompleted',
  'Rejected',
  'Cancelled',
];
export const isFinal = (status: PaymentStatus | undefined): boolean =>
  status !== undefined && FINAL_STATUSES.includes(status);

export interface CreditTransfersClientOptions {
  /** The API's base URL, e.g. https://api.example.com (the paths start with /v1); a path prefix is kept. */
  baseUrl: string;
  clientId: string;
  /** client_secret_post; or give `privateKeyJwt`. */
  clientSecret?: string | undefined;
  /** private_key_jwt (RFC 7523): authenticate with a private key whose public key the client is registered with. */
  privateKeyJwt?: PrivateKeyJwtOptions | undefined;
  /**
   * DPoP-bound tokens (RFC 9449): `true` makes an ES256 key pair for this client instance, or give
   * a pair. A stolen token is then useless without the private key.
   */
  dpop?: DpopOption | undefined;
  /** Default: the base URL's /oauth/token. */
  tokenUrl?: string | undefined;
  /** Space-separated scopes; omitted asks for every scope the client is allowed. */
  scope?: string | undefined;
  retry?: RetryOptions | undefined;
  fetch?: typeof globalThis.fetch | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Each attempt's time limit in milliseconds (default: the client's `retry.attemptTimeoutMs`, 30 s). */
  attemptTimeoutMs?: number | undefined;
  servicerId?: string | undefined;
  servicerBranchId?: string | undefined;
}

/** Initiation and cancellation: the idempotency key every retry reuses (default: a new UUID). */
export interface IdempotentCallOptions extends CallOptions {
  idempotencyId?: string | undefined;
}

/** `approve` and `reject`: why (kept with the decision), and the idempotency key every retry reuses. */
export interface DecisionOptions extends CallOptions {
  reason?: string | undefined;
  /** Default: a new UUID. A repeat with the same key and decision is answered again, not refused. */
  idempotencyKey?: string | undefined;
}

/** `approveBatch`: the one decision for every pending transfer of the batch. */
export interface BatchDecisionOptions extends DecisionOptions {
  decision: ApprovalDecisionRequest['decision'];
}

export interface StatusOptions extends CallOptions {
  /** A previous answer's `etag`: an unchanged report then answers `modified: false`, without a body. */
  ifNoneMatch?: string | undefined;
}

export interface ListOptions extends CallOptions {
  /** Transfers per page, 1 to 100 (the service's default is 25). */
  limit?: number | undefined;
}

export interface ListPageOptions extends ListOptions {
  /** The previous page's `cursor`. */
  cursor?: string | undefined;
}

export interface WaitOptions extends CallOptions {
  /** Give up after this many milliseconds (WaitTimeoutError). Default: wait as long as it takes. */
  timeoutMs?: number | undefined;
  /** First pause between polls (default 500 ms); each pause grows by half up to `maxIntervalMs` (default 5 s). */
  initialIntervalMs?: number | undefined;
  maxIntervalMs?: number | undefined;
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
  readonly #retry: RetrySettings;
  readonly #fetch: typeof globalThis.fetch;
  /** The request behind each answer, so an error can name the call it is about. */
  readonly #requests = new WeakMap<Response, RequestLine>();
  /** Webhook endpoints: register, list, read, delete, rotate the secret, deliveries, redeliver. */
  readonly webhooks: WebhookEndpoints;
  /** The events list: page by page, every event, or new events as they come (`follow`). */
  readonly events: Events;
  /** The tenant's payment controls: read, replace (with the ETag), versions, limit usage. */
  readonly paymentControls: PaymentControlsCalls;

  constructor(options: CreditTransfersClientOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    const fetchImpl = options.fetch ?? globalThis.fetch;
    this.#fetch = fetchImpl;
    this.#retry = retrySettings(options.retry);
    this.tokens = new TokenManager({
      tokenUrl: options.tokenUrl ?? `${baseUrl}/oauth/token`,
      clientId: options.clientId,
      ...(options.clientSecret !== undefined && { clientSecret: options.clientSecret }),
      ...(options.privateKeyJwt !== undefined && { privateKeyJwt: options.privateKeyJwt }),
      ...(options.dpop !== undefined && { dpop: new DpopProver(options.dpop) }),
      ...(options.scope !== undefined && { scope: options.scope }),
      fetch: fetchImpl,
      retry: this.#retry,
    });
    this.#api = createClient<paths>({ baseUrl });
    const caller: ApiCaller = {
      api: this.#api,
      init: (options, repeat) => this.#init(options, repeat),
      unwrap: (result) => this.#unwrap(result),
    };
    this.webhooks = new WebhookEndpoints(caller);
    this.events = new Events(caller);
    this.paymentControls = new PaymentControlsCalls(caller);
  }

  /** Authorizes and retries one request; openapi-fetch hands every call through here. */
  async #send(request: Request, attemptTimeoutMs: number, repeat: Repeat): Promise<Response> {
    const body = request.body === null ? null : await request.arrayBuffer();
    const headers = new Headers(request.headers);
    // The caller's signal travels on the Request; openapi-fetch gives every Request one.
    const callerSignal = request.signal;
    const line: RequestLine = { call: 'api', method: request.method, url: request.url };
    let renewedAfter401 = false;
    let nonceRetried = false;
    const { dpop } = this.tokens;
    for (;;) {
      const token = await this.tokens.accessToken(callerSignal);
      const response = await sendWithRetries(
        async ({ signal }) => {
          const attemptHeaders = new Headers(headers);
          if (dpop === undefined) {
            attemptHeaders.set('Authorization', `Bearer ${token}`);
          } else {
            // A fresh proof for every attempt: the service refuses a proof it has seen.
            attemptHeaders.set('Authorization', `DPoP ${token}`);
            attemptHeaders.set('DPoP', await dpop.proof(request.method, request.url, token));
          }
          return this.#fetch(request.url, { method: request.method, headers: attemptHeaders, body, signal });
        },
        { ...this.#retry, attemptTimeoutMs },
        callerSignal,
        line,
        repeat,
      );
      dpop?.remember(response);
      if (response.status === 401 && dpop !== undefined && !nonceRetried && asksForNonce(response)) {
        // RFC 9449 9: the same token, with the nonce the refusal offers.
        nonceRetried = true;
        void response.body?.cancel().catch(() => undefined);
        continue;
      }
      if (response.status !== 401 || renewedAfter401) {
        this.#requests.set(response, line);
        return response;
      }
      // Refused token (expired early, key rotated, proof refused): one new token, one more try.
      renewedAfter401 = true;
      this.tokens.invalidate(token);
      // Not awaited: cancelling one branch of a cloned body waits for the other.
      void response.body?.cancel().catch(() => undefined);
    }
  }

  #init(options: CallOptions, repeat: Repeat = 'always') {
    const attemptTimeoutMs = options.attemptTimeoutMs ?? this.#retry.attemptTimeoutMs;
    return {
      ...(options.signal !== undefined && { signal: options.signal }),
      fetch: (request: Request) => this.#send(request, attemptTimeoutMs, repeat),
    };
  }

  #unwrap<T>(result: ResultShape<T>): T {
    if (result.error !== undefined || !result.response.ok) {
      const { response } = result;
      const line = this.#requests.get(response) ?? { call: 'api', method: '?', url: response.url };
      throw apiErrorFrom(response, result.error, line, retryAfterMs(response.headers.get('Retry-After')));
    }
    return result.data as T;
  }

  /** The body, with `requestId` and `replayed` from the headers as properties JSON leaves out. */
  #answer(result: ResultShape<CreditTransfer>): CreditTransferAnswer {
    const transfer = this.#unwrap(result);
    const info = responseInfo(result.response);
    return Object.defineProperties(transfer, {
      requestId: { value: info.requestId, enumerable: false },
      replayed: { value: info.replayed, enumerable: false },
    }) as CreditTransferAnswer;
  }

  /** Initiates a transfer (202). Without `idempotencyId` a new one is made, so retries stay safe. */
  async initiate(
    transfer: CreditTransferRequest,
    options: IdempotentCallOptions = {},
  ): Promise<CreditTransferAnswer> {
    const init = this.#init(options);
    return this.#answer(
      await this.#api.POST('/v1/payments/credit-transfers', {
        ...init,
        params: {
          header: { idempotencyId: options.idempotencyId ?? randomUUID(), ...servicerHeaders(options) },
        },
        body: transfer,
      }),
    );
  }

  /**
   * Sends a batch (202): JSON credit transfers, or a pain.001 file (.001.09 or .001.03) as its
   * bytes or text. Without `idempotencyId` one is made; a pain.001's MsgId makes a resend a replay too.
   */
  async submitBatch(
    batch: CreditTransferBatchRequest | Uint8Array | string,
    options: IdempotentCallOptions = {},
  ): Promise<CreditTransferBatchAnswer> {
    const xml = typeof batch === 'string' || batch instanceof Uint8Array;
    const result = await this.#api.POST('/v1/payments/credit-transfer-batches', {
      ...this.#init(options),
      params: {
        header: { idempotencyId: options.idempotencyId ?? randomUUID(), ...servicerHeaders(options) },
      },
      body: (xml ? (typeof batch === 'string' ? batch : new TextDecoder().decode(batch)) : batch) as never,
      ...(xml && {
        bodySerializer: (body: unknown) => body as string,
        headers: { 'Content-Type': 'application/xml' },
      }),
    });
    const accepted = this.#unwrap(result) as CreditTransferBatchAccepted;
    const info = responseInfo(result.response);
    // Not enumerable: the body prints as the service sent it.
    return Object.defineProperties(accepted, {
      requestId: { value: info.requestId, enumerable: false },
      replayed: { value: info.replayed, enumerable: false },
    }) as CreditTransferBatchAnswer;
  }

  /** One page of the client's batches, newest first. */
  async batchesPage(filters: BatchFilters = {}, options: ListPageOptions = {}): Promise<BatchPage> {
    const result = await this.#api.GET('/v1/payments/credit-transfer-batches', {
      ...this.#init(options),
      params: {
        query: {
          ...filters,
          ...(options.cursor !== undefined && { cursor: options.cursor }),
          ...(options.limit !== undefined && { limit: String(options.limit) }),
        },
        header: servicerHeaders(options),
      },
    });
    return {
      items: this.#unwrap(result) as CreditTransferBatchSummary[],
      cursor: result.response.headers.get('Pagination-Cursor') ?? '',
      ...responseInfo(result.response),
    };
  }

  /** Every batch matching the filters, newest first, across all pages. */
  async *batches(
    filters: BatchFilters = {},
    options: ListOptions = {},
  ): AsyncGenerator<CreditTransferBatchSummary> {
    let cursor: string | undefined;
    do {
      const page = await this.batchesPage(filters, { ...options, ...(cursor !== undefined && { cursor }) });
      yield* page.items;
      cursor = page.cursor;
    } while (cursor !== '');
  }

  /** The transfers with this end-to-end id (a pain.001's `PmtId/EndToEndId`, or the identifier of that scheme). */
  async findByEndToEndId(endToEndId: string, options: ListOptions = {}): Promise<CreditTransfer[]> {
    const found: CreditTransfer[] = [];
    for await (const transfer of this.list({ 'endToEndId.eq': endToEndId }, options)) found.push(transfer);
    return found;
  }

  /** The camt.054.001.08 debit notification of a transfer (XML text): its entry once settled. */
  async notification(paymentId: string, options: CallOptions = {}): Promise<string> {
    const result = await this.#api.GET('/v1/payments/credit-transfers/{paymentId}/notification', {
      ...this.#init(options),
      params: { path: { paymentId }, header: servicerHeaders(options) },
      parseAs: 'text',
    });
    return this.#unwrap(result) as unknown as string;
  }

  /** The camt.054.001.08 debit notification of a batch (XML text): an entry per settled transfer. */
  async batchNotification(batchId: string, options: CallOptions = {}): Promise<string> {
    const result = await this.#api.GET('/v1/payments/credit-transfer-batches/{batchId}/notification', {
      ...this.#init(options),
      params: { path: { batchId }, header: servicerHeaders(options) },
      parseAs: 'text',
    });
    return this.#unwrap(result) as unknown as string;
  }

  /** A page of a batch's transfers with their statuses (`next` names the following page). */
  async batch(
    batchId: string,
    options: CallOptions & { cursor?: string } = {},
  ): Promise<CreditTransferBatch> {
    const result = await this.#api.GET('/v1/payments/credit-transfer-batches/{batchId}', {
      ...this.#init(options),
      params: {
        path: { batchId },
        query: { ...(options.cursor !== undefined && { cursor: options.cursor }) },
        header: servicerHeaders(options),
      },
    });
    return this.#unwrap(result) as CreditTransferBatch;
  }

  /** The status report, with its `etag`. */
  status(paymentId: string, options?: StatusOptions & { ifNoneMatch?: undefined }): Promise<StatusResult>;
  /** With `ifNoneMatch` (a previous `etag`): an unchanged report answers `modified: false` and no report. */
  status(
    paymentId: string,
    options: StatusOptions & { ifNoneMatch: string },
  ): Promise<StatusResult | NotModifiedResult>;
  status(paymentId: string, options?: StatusOptions): Promise<StatusResult | NotModifiedResult>;
  async status(paymentId: string, options: StatusOptions = {}): Promise<StatusResult | NotModifiedResult> {
    const init = this.#init(options);
    const result = await this.#api.GET('/v1/payments/credit-transfers/{paymentId}/status', {
      ...init,
      params: { path: { paymentId }, header: servicerHeaders(options) },
      headers: {
        ...(options.ifNoneMatch !== undefined && { 'If-None-Match': options.ifNoneMatch }),
      },
    });
    const etag = result.response.headers.get('ETag') ?? undefined;
    const info = responseInfo(result.response);
    if (result.response.status === 304 && options.ifNoneMatch !== undefined)
      return { modified: false, report: undefined, etag: etag ?? options.ifNoneMatch, ...info };
    return { modified: true, report: this.#unwrap(result) as StatusReport, etag, ...info };
  }

  /** Requests a cancellation (202). Without `idempotencyId` a new one is made, so retries stay safe. */
  async cancel(
    paymentId: string,
    request: CancellationRequest = {},
    options: IdempotentCallOptions = {},
  ): Promise<CreditTransferAnswer> {
    const init = this.#init(options);
    return this.#answer(
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

  /**
   * Approves a transfer that waits in `Pending` (scope `transactions:approve`); answers the
   * transfer as it now is. Without `idempotencyKey` a new one is made: a retry is answered again.
   */
  approve(paymentId: string, options: DecisionOptions = {}): Promise<CreditTransferAnswer> {
    return this.#decide(paymentId, 'approve', options);
  }

  /** Rejects a transfer that waits in `Pending`: it ends `Rejected` (OrderCancelled, DS02). */
  reject(paymentId: string, options: DecisionOptions = {}): Promise<CreditTransferAnswer> {
    return this.#decide(paymentId, 'reject', options);
  }

  async #decide(
    paymentId: string,
    decision: ApprovalDecisionRequest['decision'],
    options: DecisionOptions,
  ): Promise<CreditTransferAnswer> {
    return this.#answer(
      await this.#api.POST('/v1/payments/credit-transfers/{paymentId}/approvals', {
        ...this.#init(options),
        params: {
          path: { paymentId },
          header: { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() },
        },
        body: { decision, ...(options.reason !== undefined && { reason: options.reason }) },
      }),
    );
  }

  /** The decisions on a transfer, oldest first (none for a transfer never held for approval). */
  async approvals(paymentId: string, options: CallOptions = {}): Promise<ApprovalDecision[]> {
    return this.#unwrap(
      await this.#api.GET('/v1/payments/credit-transfers/{paymentId}/approvals', {
        ...this.#init(options),
        params: { path: { paymentId } },
      }),
    );
  }

  /**
   * One decision for every pending transfer of a batch: how many it decided, and each it could
   * not, with why. Without `idempotencyKey` a new one is made: a retry is answered again.
   */
  async approveBatch(batchId: string, options: BatchDecisionOptions): Promise<BatchApprovalResult> {
    return this.#unwrap(
      await this.#api.POST('/v1/payments/credit-transfer-batches/{batchId}/approvals', {
        ...this.#init(options),
        params: {
          path: { batchId },
          header: { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() },
        },
        body: {
          decision: options.decision,
          ...(options.reason !== undefined && { reason: options.reason }),
        },
      }),
    );
  }

  /** One page of the list, newest first. */
  async listPage(filters: ListFilters = {}, options: ListPageOptions = {}): Promise<ListPage> {
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
    // `N` or, when the service stopped counting, `N+`.
    const total = /^(\d+)(\+?)$/.exec(result.response.headers.get('Pagination-Total') ?? '');
    return {
      items,
      cursor: result.response.headers.get('Pagination-Cursor') ?? '',
      total: total === null ? undefined : Number(total[1]),
      totalIsLowerBound: total?.[2] === '+',
      ...responseInfo(result.response),
    };
  }

  /** Every page of the list (the cursor sent back with the same filters), page by page. */
  async *pages(filters: ListFilters = {}, options: ListOptions = {}): AsyncGenerator<ListPage> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage(filters, { ...options, ...(cursor !== undefined && { cursor }) });
      yield page;
      cursor = page.cursor;
    } while (cursor !== '');
  }

  /** Every transfer matching the filters, newest first, across all pages. */
  async *list(filters: ListFilters = {}, options: ListOptions = {}): AsyncGenerator<CreditTransfer> {
    for await (const page of this.pages(filters, options)) yield* page.items;
  }

  /**
   * Yields the status report each time it changes (the first one too), with conditional requests,
   * until a final status; polls back off from `initialIntervalMs` to `maxIntervalMs`.
   */
  async *watchStatus(paymentId: string, options: WaitOptions = {}): AsyncGenerator<StatusReport> {
    const { timeoutMs, initialIntervalMs, maxIntervalMs, ...callOptions } = options;
    const deadline = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([options.signal, deadline].filter((s) => s !== undefined));
    let interval = initialIntervalMs ?? 500;
    const maxInterval = maxIntervalMs ?? 5_000;
    let etag: string | undefined;
    let last: StatusReport | undefined;
    try {
      for (;;) {
        const result = await this.status(paymentId, {
          ...callOptions,
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
  async waitForFinalStatus(paymentId: string, options: WaitOptions = {}): Promise<FinalStatusReport> {
    let last: StatusReport | undefined;
    for await (const report of this.watchStatus(paymentId, options)) last = report;
    // watchStatus only ends at a final status, and the service gives every rejection its reason.
    return last as FinalStatusReport;
  }
}

const sameReport = (a: StatusReport, b: StatusReport | undefined) =>
  b !== undefined && a.status === b.status && a.statusReason === b.statusReason && a.date === b.date;
