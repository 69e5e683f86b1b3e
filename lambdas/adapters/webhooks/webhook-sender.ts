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

/**
 * Sends deliveries with Node's http(s) client: a new connection per attempt (so each is checked),
 * redirects never followed (an answer is an answer: 3xx fails), one time limit for connection and
 * answer together, and the answer's body read and dropped.
 */
export class HttpWebhookSender implements WebhookSender {
  constructor(private readonly options: { timeoutMs?: number; lookup?: Lookup; userAgent?: string } = {}) {}

  send(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const url = new URL(request.url);
    const literal = literalAddressOf(url.hostname);
    if (literal !== undefined && !isAllowedTarget(literal, request.allowLoopback)) {
      return Promise.resolve({ error: new AddressNotAllowedError(literal).message, durationMs: elapsed() });
    }
    const timeoutMs = this.options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    return new Promise((resolve) => {
      let timedOut = false;
      let settled = false;
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
          answer.resume();
          answer.on('error', () => undefined);
          const status = answer.statusCode ?? 0;
          settle(
            status >= 100 && status <= 599
              ? { httpStatus: status, durationMs: elapsed() }
              : { error: `answered with status ${status}`, durationMs: elapsed() },
          );
        },
      );
      const timer = setTimeout(() => {
        timedOut = true;
        outgoing.destroy(new Error('timeout'));
      }, timeoutMs);
      outgoing.on('error', (error: Error & { code?: string }) =>
        settle({ error: errorText(error, timedOut ? timeoutMs : undefined), durationMs: elapsed() }),
      );
      outgoing.end(request.body);
    });
  }
}
