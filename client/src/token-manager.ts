import { apiErrorFrom, CreditTransfersError, type RequestLine } from './errors.ts';
import {
  asksForNonce,
  assertionSigner,
  type DpopProver,
  JWT_BEARER_ASSERTION_TYPE,
  type PrivateKeyJwtOptions,
} from './key-authentication.ts';
import {
  type RetryOptions,
  type RetrySettings,
  retryAfterMs,
  retrySettings,
  sendWithRetries,
} from './retry.ts';
import type { TokenResponse } from './types.ts';

export interface TokenManagerOptions {
  /** The token endpoint, e.g. https://api.example.com/oauth/token. */
  tokenUrl: string;
  clientId: string;
  /** client_secret_post; or authenticate with `privateKeyJwt`. */
  clientSecret?: string | undefined;
  /** private_key_jwt (RFC 7523): assertions signed with this key, in place of a secret. */
  privateKeyJwt?: PrivateKeyJwtOptions | undefined;
  /** DPoP-bound tokens (RFC 9449): proofs made with this key pair. */
  dpop?: DpopProver | undefined;
  /** Space-separated scopes; omitted asks for every scope the client is allowed. */
  scope?: string | undefined;
  fetch?: typeof globalThis.fetch | undefined;
  retry?: RetryOptions | undefined;
  /** Clock, for tests. */
  now?: (() => number) | undefined;
}

interface CachedToken {
  response: TokenResponse;
  accessToken: string;
  expiresAt: number;
  renewAt: number;
}

/** Renew a minute before expiry, or a tenth of the lifetime for short-lived tokens. */
const renewalMargin = (lifetimeMs: number) => Math.min(60_000, lifetimeMs / 10);

/**
 * OAuth 2.0 client credentials: one token cached and shared by concurrent calls, renewed before
 * it expires and on demand after a 401. The client secret stays in a closure: it is never part of
 * this object's fields, a log line, an error message or an error object.
 */
export class TokenManager {
  readonly #tokenUrl: string;
  readonly #requestBody: () => Promise<{ contentType: string; body: string }>;
  readonly #dpop: DpopProver | undefined;
  readonly #fetch: typeof globalThis.fetch;
  readonly #retry: RetrySettings;
  readonly #now: () => number;
  #cached: CachedToken | undefined;
  #pending: Promise<CachedToken> | undefined;
  /** How many tokens this manager has obtained (for diagnostics and tests). */
  issued = 0;

  constructor(options: TokenManagerOptions) {
    const { clientId, clientSecret, scope, privateKeyJwt } = options;
    this.#tokenUrl = options.tokenUrl;
    this.#dpop = options.dpop;
    if ((clientSecret === undefined) === (privateKeyJwt === undefined)) {
      throw new TypeError('Give either clientSecret or privateKeyJwt');
    }
    if (privateKeyJwt !== undefined) {
      // The token endpoint URL is an audience the service accepts beside its issuer identifier.
      const assertion = assertionSigner(clientId, options.tokenUrl, privateKeyJwt);
      this.#requestBody = async () => ({
        contentType: 'application/x-www-form-urlencoded',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: JWT_BEARER_ASSERTION_TYPE,
          client_assertion: await assertion(),
          ...(scope !== undefined && { scope }),
        }).toString(),
      });
    } else {
      this.#requestBody = async () => ({
        contentType: 'application/json',
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret,
          ...(scope !== undefined && { scope }),
        }),
      });
    }
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#retry = retrySettings(options.retry);
    this.#now = options.now ?? Date.now;
  }

  /** A token valid for a while yet: the cached one, or a new one. */
  async accessToken(signal?: AbortSignal): Promise<string> {
    const cached = this.#cached;
    if (cached !== undefined && this.#now() < cached.renewAt) return cached.accessToken;
    return (await untilAborted(this.#obtain(), signal)).accessToken;
  }

  /** The token endpoint's whole answer for the token `accessToken` gives. */
  async tokenResponse(signal?: AbortSignal): Promise<TokenResponse> {
    const cached = this.#cached;
    if (cached !== undefined && this.#now() < cached.renewAt) return cached.response;
    return (await untilAborted(this.#obtain(), signal)).response;
  }

  /** Forget `token` (the service refused it): the next call obtains another one. */
  invalidate(token: string): void {
    if (this.#cached?.accessToken === token) this.#cached = undefined;
  }

  get #requestLine(): RequestLine {
    return { call: 'token', method: 'POST', url: this.#tokenUrl };
  }

  #obtain(): Promise<CachedToken> {
    // Concurrent callers share one token request; one caller giving up does not end it for the others.
    this.#pending ??= this.#request().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The token endpoint's answer; once more with the nonce it asks for (RFC 9449 8). */
  async #post(): Promise<{ response: Response; body: unknown }> {
    for (let attempt = 1; ; attempt++) {
      const response = await sendWithRetries(
        // Every attempt signs anew: an assertion's and a proof's jti are used once.
        async ({ signal: attemptSignal }) => {
          const { contentType, body } = await this.#requestBody();
          const dpop = await this.#dpop?.proof('POST', this.#tokenUrl);
          return this.#fetch(this.#tokenUrl, {
            method: 'POST',
            headers: {
              'Content-Type': contentType,
              Accept: 'application/json',
              ...(dpop !== undefined && { DPoP: dpop }),
            },
            body,
            signal: attemptSignal,
          });
        },
        this.#retry,
        undefined,
        this.#requestLine,
      );
      this.#dpop?.remember(response);
      const body: unknown = await response.json().catch(() => undefined);
      if (attempt === 1 && this.#dpop !== undefined && !response.ok && asksForNonce(response, body)) continue;
      return { response, body };
    }
  }

  /** The DPoP prover tokens are bound with, when they are. */
  get dpop(): DpopProver | undefined {
    return this.#dpop;
  }

  async #request(): Promise<CachedToken> {
    const { response, body } = await this.#post();
    if (!response.ok) {
      throw apiErrorFrom(
        response,
        body,
        this.#requestLine,
        retryAfterMs(response.headers.get('Retry-After')),
      );
    }
    const token = body as Partial<TokenResponse> | undefined;
    if (typeof token?.access_token !== 'string' || typeof token.expires_in !== 'number') {
      throw new CreditTransfersError(
        `The token endpoint (POST ${this.#tokenUrl}) answered without access_token and expires_in`,
      );
    }
    const issuedAt = this.#now();
    const lifetimeMs = token.expires_in * 1000;
    this.issued++;
    this.#cached = {
      response: token as TokenResponse,
      accessToken: token.access_token,
      expiresAt: issuedAt + lifetimeMs,
      renewAt: issuedAt + lifetimeMs - renewalMargin(lifetimeMs),
    };
    return this.#cached;
  }

  /** Who is asking, never with what: safe to log. */
  toJSON() {
    return { tokenUrl: this.#tokenUrl, issued: this.issued };
  }
}

/** The promise's outcome, or the signal's reason as soon as it aborts. */
const untilAborted = <T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> => {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
};
