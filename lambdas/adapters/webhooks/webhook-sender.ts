import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup as lookupPromise } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { WebhookRequest, WebhookResponse, WebhookSender } from '#domain/webhooks/ports';
import { ATTEMPT_TIMEOUT_MS } from '#domain/webhooks/webhook-schedule';
import { type HostResolver, isPublicAddress, literalAddressOf } from '#domain/webhooks/webhook-url';

/** Every address the system resolver gives for a name, as registration checks them. */
export const systemResolver: HostResolver = async (hostname) =>
  (await lookupPromise(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export class AddressNotAllowedError extends Error {
  readonly code = 'EADDRNOTALLOWED';
  constructor(address: string) {
    super(`address not public: ${address}`);
    this.name = 'AddressNotAllowedError';
  }
}

const isLoopback = (address: string): boolean => {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'loopback';
};

/** May a delivery connect to this address? Public ones; loopback only for the local runtime's own receiver. */
export const isAllowedTarget = (address: string, allowLoopback: boolean): boolean =>
  isPublicAddress(address) || (allowLoopback && isLoopback(address));

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;
type Lookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * A `lookup` for the connection that checks the addresses it resolves to: the connection goes
 * only to an address checked this very moment, so a name that resolved to a public address at
 * registration and to an inner one now (DNS rebinding) is refused. Any address not allowed
 * refuses the whole name, as registration does.
 */
export const guardedLookup =
  (allowLoopback: boolean, lookup: Lookup = dnsLookup as unknown as Lookup): LookupFunction =>
  (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const all = addresses as LookupAddress[];
      const refused = all.find((entry) => !isAllowedTarget(entry.address, allowLoopback));
      if (refused !== undefined || all.length === 0) {
        return callback(new AddressNotAllowedError(refused?.address ?? hostname), '', 4);
      }
      if (options.all) return (callback as unknown as LookupCallback)(null, all);
      const first = all[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };

const errorText = (error: Error & { code?: string }, timedOutAfterMs: number | undefined): string => {
  if (timedOutAfterMs !== undefined) return `no answer within ${timedOutAfterMs / 1000} s`;
  if (error instanceof AddressNotAllowedError) return error.message;
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
      return 'host name does not resolve';
    default:
      return (error.code ?? error.message).slice(0, 200);
  }
};

/** Bytes of an answer's body read at most; the rest is never read (the connection is closed). */
export const MAX_ANSWER_BYTES = 4096;
/** Sockets one sender holds open at once, and to one origin (an endpoint's scheme, host and port). */
export const SENDER_LIMITS = { sockets: 64, socketsPerOrigin: 4 };

/**
 * Counts held places and queues the rest; a place is given back when its socket has closed. A
 * place that comes free goes to the waiting tenants in turns (one tenant's queue of attempts to a
 * slow origin never stands in front of another tenant's), each tenant's in order.
 */
class Places {
  private held = 0;
  /** Waiting attempts per tenant, the tenants in the order they are served next (a Map keeps it). */
  private readonly waiting = new Map<string, (() => void)[]>();
  constructor(private readonly limit: number) {}

  async take(tenant: string): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      return;
    }
    await new Promise<void>((resolve) => {
      const own = this.waiting.get(tenant);
      if (own) own.push(resolve);
      else this.waiting.set(tenant, [resolve]);
    });
  }

  give(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.held--;
      return;
    }
    const [tenant, own] = next.value;
    const resolve = own.shift();
    // This tenant goes to the back of the line; one with nothing waiting leaves it.
    this.waiting.delete(tenant);
    if (own.length > 0) this.waiting.set(tenant, own);
    resolve?.();
  }

  get inUse(): number {
    return this.held;
  }
}

/**
 * Sends deliveries with Node's http(s) client: a new connection per attempt (so each is checked),
 * redirects never followed (an answer is an answer: 3xx fails). One time limit covers the whole
 * exchange (connection, status line, headers and body); at most MAX_ANSWER_BYTES of the body are
 * read, then the connection is closed; a body not complete in time fails the attempt with that
 * reason. Sockets are capped per origin and in total, each place given back only once its socket
 * has closed, so no receiver (trickling, or sending without end) holds more than its share; places
 * that come free go to the tenants waiting for them in turns. The
 * same sender runs in both runtimes.
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly total: Places;
  private readonly perOrigin = new Map<string, Places>();

  constructor(
    private readonly options: {
      timeoutMs?: number;
      lookup?: Lookup;
      userAgent?: string;
      limits?: typeof SENDER_LIMITS;
    } = {},
  ) {
    this.total = new Places((options.limits ?? SENDER_LIMITS).sockets);
  }

  /** Sockets open now, for the tests and the figures. */
  get openSockets(): number {
    return this.total.inUse;
  }

  private originPlaces(origin: string): Places {
    let places = this.perOrigin.get(origin);
    if (places === undefined) {
      places = new Places((this.options.limits ?? SENDER_LIMITS).socketsPerOrigin);
      this.perOrigin.set(origin, places);
    }
    return places;
  }

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const url = new URL(request.url);
    const literal = literalAddressOf(url.hostname);
    if (literal !== undefined && !isAllowedTarget(literal, request.allowLoopback)) {
      return { error: new AddressNotAllowedError(literal).message, durationMs: elapsed() };
    }
    const timeoutMs = this.options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    const origin = this.originPlaces(url.origin);
    const tenant = request.tenant ?? '';
    await origin.take(tenant);
    await this.total.take(tenant);
    const release = () => {
      this.total.give();
      origin.give();
      if (origin.inUse === 0) this.perOrigin.delete(url.origin);
    };
    return new Promise((resolve) => {
      let timedOut = false;
      let settled = false;
      let status: number | undefined;
      const settle = (response: WebhookResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(response);
      };
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = send(
        url,
        {
          method: 'POST',
          agent: false,
          lookup: guardedLookup(request.allowLoopback, this.options.lookup),
          headers: {
            ...request.headers,
            'content-length': String(Buffer.byteLength(request.body)),
            'user-agent': this.options.userAgent ?? 'credit-transfers-webhooks/1',
          },
        },
        (answer) => {
          status = answer.statusCode ?? 0;
          let read = 0;
          const done = () => {
            const answered = status as number;
            settle(
              answered >= 100 && answered <= 599
                ? { httpStatus: answered, durationMs: elapsed() }
                : { error: `answered with status ${answered}`, durationMs: elapsed() },
            );
            outgoing.destroy();
          };
          answer.on('data', (chunk: Buffer) => {
            read += chunk.length;
            // Enough of the answer: the rest is discarded unread.
            if (read >= MAX_ANSWER_BYTES) done();
          });
          answer.on('end', done);
          answer.on('error', () => undefined);
        },
      );
      // The place is given back only once the socket is closed, whatever ended the attempt.
      outgoing.on('close', release);
      const timer = setTimeout(() => {
        timedOut = true;
        settle({
          error:
            status === undefined
              ? errorText(new Error('timeout'), timeoutMs)
              : `answer body not complete within ${timeoutMs / 1000} s (status ${status})`,
          durationMs: elapsed(),
        });
        outgoing.destroy(new Error('timeout'));
      }, timeoutMs);
      outgoing.on('error', (error: Error & { code?: string }) =>
        settle({ error: errorText(error, timedOut ? timeoutMs : undefined), durationMs: elapsed() }),
      );
      outgoing.end(request.body);
    });
  }
}
