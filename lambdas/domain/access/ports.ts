import type { ClientRecord } from './client.ts';
import type { TenantRateLimit } from './tenant-rate-limit.ts';
import type { JsonWebKeySet, SigningKeySchedule, TokenSigningAlgorithm } from './token-signer.ts';

/** Where clients live: the token endpoint reads them, registration and administration write them. */
export interface ClientStore {
  get(clientId: string): Promise<ClientRecord | undefined>;
  /** Stores the client, replacing one with the same id. */
  put(client: ClientRecord): Promise<void>;
  /** Stores a new client; `false` when the id is taken already. */
  create(client: ClientRecord): Promise<boolean>;
  /** Replaces the client only if it still has `expectedRevision` (undefined: none yet); `false` otherwise. */
  update(client: ClientRecord, expectedRevision: number | undefined): Promise<boolean>;
  /** Every client, ordered by id. */
  list(): Promise<ClientRecord[]>;
}

/** What one client authentication attempt may do. */
export type AuthenticationAttempt = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Who is authenticating: the client id sent (known or not) and the address the request came from. */
export interface AuthenticationCaller {
  clientId: string;
  sourceAddress: string;
}

/** A check that has its place in the caller's window: the failures counted then, and which window. */
export interface AuthenticationCheck {
  failures: number;
  /** The window's end (epoch seconds): a success gives its place back in this window only. */
  window: number;
}

/**
 * Secret checks per client id and source address, in a window that ends by itself. Each check
 * claims its place atomically before the secret is checked, so parallel requests get no more
 * checks than the limit; a wrong secret turns the place into a failure, a correct one gives it
 * back. A check whose places are held by others in flight waits for them: a correct secret is
 * refused only after the limit of failures from its own address, and failures from one address
 * never refuse another.
 */
export interface AuthenticationThrottle {
  /** Before the secret is checked: claims a check, or refuses once the caller's failures reach the limit. */
  check(caller: AuthenticationCaller, now: Date): Promise<AuthenticationAttempt & AuthenticationCheck>;
  failed(caller: AuthenticationCaller, now: Date): Promise<void>;
  /** After a correct secret: gives the check's place back, and the count starts again. */
  succeeded(caller: AuthenticationCaller, check: AuthenticationCheck): Promise<void>;
  /**
   * Spends one secret check of the source address's budget for the window; `false` once the
   * window's budget is spent (the caller then derives only for a known client).
   */
  spendAddressBudget(sourceAddress: string, now: Date): Promise<boolean>;
}

/**
 * Remembers each jti of a client assertion or DPoP proof until the JWT would expire: the first use
 * is recorded atomically (two requests racing with one jti: one wins), any later one is refused.
 */
export interface ReplayGuard {
  /** `true` the first time `jti` is presented for `owner`; `false` when it was seen before. */
  firstUse(
    kind: 'assertion' | 'dpop',
    owner: string,
    jti: string,
    expiresAt: number,
    now: Date,
  ): Promise<boolean>;
}

/** A change an operator made to a client; never carries a secret or a hash. */
export interface ClientAuditEvent {
  eventId: string;
  action:
    | 'ClientCreated'
    | 'ClientReplaced'
    | 'ClientDisabled'
    | 'ClientSecretRotated'
    | 'ClientKeysReplaced';
  clientId: string;
  tenant: string;
  scopes: string[];
  /** Who made the change: the operator's identity as the tool could establish it. */
  actor: string;
  date: string;
  /** On a rotation: until when the previous secret still works (absent: not at all). */
  previousSecretExpiresAt?: string;
}

export interface ClientAuditPublisher {
  /** Publishes the event or throws. */
  publish(event: ClientAuditEvent): Promise<void>;
}

/**
 * Signs access tokens (RS256 or ES256, as the key is) with one key. On AWS the private key stays
 * in KMS; locally it is a key file.
 */
export interface TokenSigner {
  /** The `kid` of the key that signs now. */
  keyId(): Promise<string>;
  /** The JWS `alg` this key signs with. */
  algorithm(): Promise<TokenSigningAlgorithm>;
  /** The JWS signature over the signing input (RS256: RSASSA-PKCS1-v1_5; ES256: raw r||s, 64 bytes). */
  sign(signingInput: Buffer): Promise<Buffer>;
  publicJwks(): Promise<JsonWebKeySet>;
}

/**
 * The token keys: the one that signs now, and every key a token may be verified with (the key set):
 * the signing key, and during a rotation the one before or after it, each with its `kid`.
 */
export interface TokenKeys {
  signingKey(): Promise<TokenSigner>;
  publicJwks(): Promise<JsonWebKeySet>;
}

/** An access token as its verifier read it: the claims, and the header parameters checked. */
export interface VerifiedAccessToken {
  header: { alg?: string; crit?: unknown };
  payload: Record<string, unknown>;
}

/**
 * Verifies an access token's signature (by its `kid` in the key set, never fetched), expiry,
 * issuer and audience, then hands it to `check` (given when the verifier is made); throws when
 * any of them fails. Returns the claims.
 */
export interface AccessTokenVerifier {
  verify(
    token: string,
    expected: { issuer: string; audience: string; jwks: JsonWebKeySet },
  ): Record<string, unknown>;
}

/** Reads the signing key schedule (AWS) and changes it, only if unchanged since it was read. */
export interface SigningKeyScheduleStore {
  get(): Promise<SigningKeySchedule | undefined>;
  /** `false` when someone else changed it since `expectedRevision` (0: none stored yet). */
  put(schedule: SigningKeySchedule, expectedRevision: number): Promise<boolean>;
}

/**
 * Per-tenant request limits. On AWS each tenant has an API key in a usage plan of the stage (the
 * default plan, or one of its own carrying its limit); locally a file the gateway reads.
 */
export interface TenantRateLimits {
  /** The tenant's own limit; undefined when the default applies. */
  get(tenant: string): Promise<TenantRateLimit | undefined>;
  set(tenant: string, limit: TenantRateLimit): Promise<void>;
  /** Back to the default; `false` when the tenant had no limit of its own. */
  clear(tenant: string): Promise<boolean>;
  /** Every tenant with a limit of its own, ordered by tenant. */
  list(): Promise<{ tenant: string; limit: TenantRateLimit }[]>;
  /** The tenant's calls are let through at the default limit unless it has its own (idempotent). */
  admit(tenant: string): Promise<void>;
}
