import { type ApiCaller, responseInfo } from './api-caller.ts';
import type { CallOptions } from './client.ts';
import type {
  PaymentControls,
  PaymentControlsRequest,
  PaymentControlsResult,
  PaymentControlsUsage,
  PaymentControlsVersion,
} from './types.ts';

export interface PutPaymentControlsOptions extends CallOptions {
  /**
   * The ETag of the version this change replaces (from `get` or the last `put`). Required once a
   * version exists: without it PreconditionRequiredError (428), with an older one
   * PreconditionFailedError (412).
   */
  ifMatch?: string | undefined;
}

export interface VersionsPageOptions extends CallOptions {
  /** Versions older than this version number (the last one of the previous page). */
  before?: number | undefined;
}

export interface UsageQuery {
  debtorAccountId: string;
  currency: string;
}

/**
 * The tenant's payment controls (scope `payment-controls:manage`): approval rules, approval
 * expiry and limits, one document with a version per change.
 */
export class PaymentControlsCalls {
  readonly #caller: ApiCaller;
  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** The current document and its ETag (before the first change: the empty document, ETag `"0"`). */
  async get(options: CallOptions = {}): Promise<PaymentControlsResult> {
    const { api, init, unwrap } = this.#caller;
    const result = await api.GET('/v1/payment-controls', init(options));
    return this.#withEtag(unwrap(result), result.response);
  }

  /**
   * Replaces the document (a new version) and answers it with its new ETag. Not repeated after an
   * attempt the service may have acted on: the repeat would be refused 412 although the change
   * was stored. After such an error, `get` tells which version is current.
   */
  async put(
    controls: PaymentControlsRequest,
    options: PutPaymentControlsOptions = {},
  ): Promise<PaymentControlsResult> {
    const { api, init, unwrap } = this.#caller;
    const result = await api.PUT('/v1/payment-controls', {
      ...init(options, 'unless-maybe-done'),
      params: { header: { ...(options.ifMatch !== undefined && { 'If-Match': options.ifMatch }) } },
      body: controls,
    });
    return this.#withEtag(unwrap(result), result.response);
  }

  /** One page of versions, newest first (100 at most). */
  async versionsPage(options: VersionsPageOptions = {}): Promise<PaymentControlsVersion[]> {
    const { api, init, unwrap } = this.#caller;
    return unwrap(
      await api.GET('/v1/payment-controls/versions', {
        ...init(options),
        params: { query: { ...(options.before !== undefined && { before: String(options.before) }) } },
      }),
    );
  }

  /** Every version, newest first, across all pages. */
  async *versions(options: CallOptions = {}): AsyncGenerator<PaymentControlsVersion> {
    let before: number | undefined;
    for (;;) {
      const page = await this.versionsPage({ ...options, ...(before !== undefined && { before }) });
      yield* page;
      const last = page.at(-1);
      // Versions count from 1: the page that ends at version 1 is the last.
      if (last === undefined || last.version <= 1) return;
      before = last.version;
    }
  }

  /** The limits that apply to an account in a currency, each with what its current period has used and has left. */
  async usage(query: UsageQuery, options: CallOptions = {}): Promise<PaymentControlsUsage> {
    const { init, unwrap } = this.#caller;
    return unwrap(
      await this.#caller.api.GET('/v1/payment-controls/usage', {
        ...init(options),
        params: { query: { debtorAccountId: query.debtorAccountId, currency: query.currency } },
      }),
    );
  }

  #withEtag(controls: PaymentControls, response: Response): PaymentControlsResult {
    // The service sends an ETag with every answer of these routes.
    return { controls, etag: response.headers.get('ETag') ?? '', ...responseInfo(response) };
  }
}
