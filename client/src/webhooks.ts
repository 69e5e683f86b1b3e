import { type ApiCaller, responseInfo } from './api-caller.ts';
import type { CallOptions, ListOptions, ListPageOptions } from './client.ts';
import { sleep } from './retry.ts';
import type {
  CreatedWebhookEndpoint,
  EventFilters,
  EventPage,
  RotatedWebhookSecret,
  WebhookDeliveryAttempt,
  WebhookEndpoint,
  WebhookEndpointPage,
  WebhookEndpointRequest,
  WebhookEvent,
  WebhookRedeliveryRequest,
  WebhookRedeliveryResult,
} from './types.ts';

export interface DeliveriesOptions extends CallOptions {
  /** Attempts to show, newest first, 1 to 100 (the service's default is 25). */
  limit?: number | undefined;
}

export interface FollowOptions extends ListOptions {
  /** Pause between looks for new events (default 2000 ms). */
  intervalMs?: number | undefined;
}

const limitQuery = (limit: number | undefined) => (limit === undefined ? {} : { limit: String(limit) });

/**
 * The client's webhook endpoints (scope `webhooks:manage`). Registering is not repeated after
 * an attempt the service may have acted on (it would register a second endpoint); every other
 * call is retried as the client's calls are.
 */
export class WebhookEndpoints {
  readonly #caller: ApiCaller;
  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** Registers an endpoint (201). The answer carries its signing `secret`, this once only: keep it. */
  async create(request: WebhookEndpointRequest, options: CallOptions = {}): Promise<CreatedWebhookEndpoint> {
    const { api, init, unwrap } = this.#caller;
    return unwrap(
      await api.POST('/v1/webhook-endpoints', { ...init(options, 'unless-maybe-done'), body: request }),
    );
  }

  /** One page of endpoints, oldest first. */
  async listPage(options: ListPageOptions = {}): Promise<WebhookEndpointPage> {
    const { api, init, unwrap } = this.#caller;
    const result = await api.GET('/v1/webhook-endpoints', {
      ...init(options),
      params: {
        query: {
          ...(options.cursor !== undefined && { cursor: options.cursor }),
          ...limitQuery(options.limit),
        },
      },
    });
    return {
      items: unwrap(result),
      cursor: result.response.headers.get('Pagination-Cursor') ?? '',
      ...responseInfo(result.response),
    };
  }

  /** Every endpoint, oldest first, across all pages. */
  async *list(options: ListOptions = {}): AsyncGenerator<WebhookEndpoint> {
    let cursor = '';
    do {
      const page = await this.listPage({ ...options, ...(cursor !== '' && { cursor }) });
      yield* page.items;
      cursor = page.cursor;
    } while (cursor !== '');
  }

  /** One endpoint; another client's, or an unknown id, is ApiError 404 `not_found`. */
  async get(id: string, options: CallOptions = {}): Promise<WebhookEndpoint> {
    const { api, init, unwrap } = this.#caller;
    return unwrap(
      await api.GET('/v1/webhook-endpoints/{id}', { ...init(options), params: { path: { id } } }),
    );
  }

  /** Deletes the endpoint (204): nothing more is sent to it. */
  async delete(id: string, options: CallOptions = {}): Promise<void> {
    const { api, init, unwrap } = this.#caller;
    unwrap(await api.DELETE('/v1/webhook-endpoints/{id}', { ...init(options), params: { path: { id } } }));
  }

  /** A new signing secret; the one it replaces keeps signing beside it until `previousSecretExpiresAt` (24 h). */
  async rotateSecret(id: string, options: CallOptions = {}): Promise<RotatedWebhookSecret> {
    const { api, init, unwrap } = this.#caller;
    return unwrap(
      await api.POST('/v1/webhook-endpoints/{id}/secret-rotation', {
        ...init(options),
        params: { path: { id } },
        body: {},
      }),
    );
  }

  /** The latest delivery attempts to the endpoint (kept 30 days), newest first. */
  async deliveries(id: string, options: DeliveriesOptions = {}): Promise<WebhookDeliveryAttempt[]> {
    const { api, init, unwrap } = this.#caller;
    return unwrap(
      await api.GET('/v1/webhook-endpoints/{id}/deliveries', {
        ...init(options),
        params: { path: { id }, query: limitQuery(options.limit) },
      }),
    );
  }

  /**
   * Queues events again for the endpoint (202): one (`eventId`) or every event `since` a time,
   * at most 1000 per call; `nextSince` in the answer says where to go on.
   */
  async redeliver(
    id: string,
    request: WebhookRedeliveryRequest,
    options: CallOptions = {},
  ): Promise<WebhookRedeliveryResult> {
    const { api, init, unwrap } = this.#caller;
    return unwrap(
      await api.POST('/v1/webhook-endpoints/{id}/redeliveries', {
        ...init(options),
        params: { path: { id } },
        body: request,
      }),
    );
  }
}

/**
 * The events list (scope `transactions:read`): the client's events, oldest first, each exactly
 * the body its webhook deliveries send. Recent events are listed at once; the cursor handed back
 * never moves past the last 15 seconds, so a reader never pages past an event written a moment
 * late, and may see a recent event twice (these methods drop repeats by id).
 */
export class Events {
  readonly #caller: ApiCaller;
  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** One page of events, oldest first. */
  async listPage(filters: EventFilters = {}, options: ListPageOptions = {}): Promise<EventPage> {
    const { api, init, unwrap } = this.#caller;
    const result = await api.GET('/v1/events', {
      ...init(options),
      params: {
        query: {
          ...filters,
          ...(options.cursor !== undefined && { cursor: options.cursor }),
          ...limitQuery(options.limit),
        },
      },
    });
    return {
      items: unwrap(result),
      cursor: result.response.headers.get('Pagination-Cursor') ?? '',
      ...responseInfo(result.response),
    };
  }

  /**
   * Every event matching the filters, oldest first, across all pages (to catch up,
   * `createdAt.gte`), each once: it ends on the last page, or on a page that brings no new event.
   */
  async *list(filters: EventFilters = {}, options: ListOptions = {}): AsyncGenerator<WebhookEvent> {
    const seen = new Set<string>();
    let cursor = '';
    do {
      const page = await this.listPage(filters, { ...options, ...(cursor !== '' && { cursor }) });
      const fresh = page.items.filter((event) => !seen.has(event.id));
      for (const event of fresh) seen.add(event.id);
      yield* fresh;
      cursor = fresh.length === 0 ? '' : page.cursor;
    } while (cursor !== '');
  }

  /**
   * Every event matching the filters from `createdAt.gte` (default: now) on, oldest first, and
   * then each new one as it is listed, looking again every `intervalMs`; it never ends by itself
   * (break out of the loop, or abort `signal`). Each event comes once.
   */
  async *follow(filters: EventFilters = {}, options: FollowOptions = {}): AsyncGenerator<WebhookEvent> {
    const { intervalMs = 2_000, ...listOptions } = options;
    let from = filters['createdAt.gte'] ?? new Date().toISOString();
    let newest = '';
    // Followed while the list hands one back: it never moves past an event that may appear late.
    let cursor = '';
    // Ids seen lately, by createdAt: a recent event may be listed again.
    const seen = new Map<string, string>();
    for (;;) {
      const page = await this.listPage(
        { ...filters, 'createdAt.gte': from },
        { ...listOptions, ...(cursor !== '' && { cursor }) },
      );
      let fresh = 0;
      for (const event of page.items) {
        if (seen.has(event.id)) continue;
        seen.set(event.id, event.createdAt);
        if (event.createdAt > newest) newest = event.createdAt;
        fresh++;
        yield event;
      }
      if (newest !== '') {
        const forgetBefore = earlierBy(newest, SEEN_WINDOW_MS);
        for (const [id, createdAt] of seen) if (createdAt < forgetBefore) seen.delete(id);
      }
      if (page.cursor === '') {
        // The page ended the list with settled events only: nothing earlier than them can appear.
        // A cursor belongs to its filters, so the next look starts afresh from there.
        if (newest !== '') from = newest;
        cursor = '';
      } else {
        cursor = page.cursor;
      }
      if (fresh === 0 || page.cursor === '') await sleep(intervalMs, options.signal);
    }
  }
}

/** Longer than the list's 15 s horizon, the most a listed event can be shown again after a newer one. */
const SEEN_WINDOW_MS = 120_000;

const earlierBy = (iso: string, ms: number): string => new Date(Date.parse(iso) - ms).toISOString();
