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
 * the body its webhook deliveries send. An event is listed once it is 15 seconds old, so that a
 * reader never pages past one written a moment late.
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

  /** Every event matching the filters, oldest first, across all pages (to catch up, `createdAt.gte`). */
  async *list(filters: EventFilters = {}, options: ListOptions = {}): AsyncGenerator<WebhookEvent> {
    let cursor = '';
    do {
      const page = await this.listPage(filters, { ...options, ...(cursor !== '' && { cursor }) });
      yield* page.items;
      cursor = page.cursor;
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
    // The events at `from` already yielded: the next look starts at `from` again.
    let seenAtFrom = new Set<string>();
    for (;;) {
      for await (const event of this.list({ ...filters, 'createdAt.gte': from }, listOptions)) {
        if (seenAtFrom.has(event.id)) continue;
        if (event.createdAt !== from) {
          from = event.createdAt;
          seenAtFrom = new Set();
        }
        seenAtFrom.add(event.id);
        yield event;
      }
      await sleep(intervalMs, options.signal);
    }
  }
}
