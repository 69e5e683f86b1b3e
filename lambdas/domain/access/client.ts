import type { Scope } from './scopes.ts';

/** An API client as the service keeps it. The secret exists only as a salted scrypt hash. */
export interface ClientRecord {
  clientId: string;
  /** `scrypt$N$r$p$salt$hash`, see client-secret.ts. */
  secretHash: string;
  /** The scopes the client may be granted; a token request may ask for fewer. */
  scopes: Scope[];
  tenant: string;
  createdAt: string;
  /** The hash of the secret before the last rotation, still accepted until `previousSecretExpiresAt`. */
  previousSecretHash?: string;
  /** ISO 8601; after it the previous secret no longer authenticates. */
  previousSecretExpiresAt?: string;
  /** ISO 8601; a disabled client is refused like an unknown one. */
  disabledAt?: string;
  /** Counts the changes made through administration, so two operators never overwrite each other. */
  revision?: number;
  /**
   * Tokens carry the generation they were issued in (claim `client_generation`); raising it revokes
   * every live token of the client. Absent: 0.
   */
  tokenGeneration?: number;
  /** The client's public keys (a JWK Set) for private_key_jwt; absent: the client has none. */
  jwks?: ClientJwkSet;
  /** How the client may authenticate at the token endpoint; absent: with its secret only. */
  authMethods?: TokenEndpointAuthMethod[];
  /** Every token of this client must be DPoP-bound (RFC 9449). */
  requireDpop?: boolean;
}

export const TOKEN_ENDPOINT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];
const SECRET_METHODS: readonly TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/** FAPI 2.0's signing algorithms: what client assertions and DPoP proofs may be signed with. */
export const CLIENT_SIGNING_ALGORITHMS = ['ES256', 'PS256', 'EdDSA'] as const;
export type ClientSigningAlgorithm = (typeof CLIENT_SIGNING_ALGORITHMS)[number];

/** A public key of a client, as RFC 7517 gives it; `kid` and `alg` are always set once registered. */
export interface ClientJwk {
  kty: 'EC' | 'RSA' | 'OKP';
  kid: string;
  alg: ClientSigningAlgorithm;
  [member: string]: unknown;
}
export interface ClientJwkSet {
  keys: ClientJwk[];
}

/**
 * The methods the client may use now: its own list (secrets only, when it has none), without the
 * secret methods when the stage refuses secrets, and without private_key_jwt when it has no key.
 */
export const allowedAuthMethods = (
  client: ClientRecord,
  stage: { clientSecretsAllowed: boolean },
): TokenEndpointAuthMethod[] =>
  (client.authMethods ?? SECRET_METHODS).filter((method) =>
    method === 'private_key_jwt' ? (client.jwks?.keys.length ?? 0) > 0 : stage.clientSecretsAllowed,
  );

/** The claim of an access token that names the client's token generation. */
export const TOKEN_GENERATION_CLAIM = 'client_generation';

/** A client whose live tokens are no longer accepted: every token from before this change is refused. */
export const withTokensRevoked = (client: ClientRecord): ClientRecord => ({
  ...client,
  tokenGeneration: (client.tokenGeneration ?? 0) + 1,
});

/** Why an access token of this client is no longer accepted, or undefined when it is. */
export const tokenRevocationReason = (
  client: ClientRecord | undefined,
  claims: { tenant: string; generation: number },
): string | undefined => {
  if (client === undefined) return 'the client no longer exists';
  if (client.disabledAt !== undefined) return 'the client is disabled';
  if (client.tenant !== claims.tenant) return 'the client belongs to another tenant now';
  if ((client.tokenGeneration ?? 0) !== claims.generation) return "the client's tokens were revoked";
  return undefined;
};

/** RFC 3986 unreserved characters only, so an id reads the same in JSON, forms and Basic credentials. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9._~-]{1,64}$/;

/** A tenant id: no '#', so a tenant in a table key can never be forged by an id that follows it. */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** How long the previous secret keeps working after a rotation unless the operator says otherwise. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;
/** A grace longer than this would keep a possibly leaked secret alive for too long. */
export const MAX_ROTATION_GRACE_SECONDS = 30 * 24 * 3600;

/** The secret hashes that authenticate the client at `now`: the current one, and the previous one in its grace period. */
export const acceptedSecretHashes = (client: ClientRecord, now: Date): string[] =>
  client.previousSecretHash !== undefined &&
  client.previousSecretExpiresAt !== undefined &&
  Date.parse(client.previousSecretExpiresAt) > now.getTime()
    ? [client.secretHash, client.previousSecretHash]
    : [client.secretHash];

/**
 * The client after a rotation: the new hash, the old one kept until `now` + grace. With grace 0
 * the old secret stops at once, and so does every token issued with it.
 */
export const withRotatedSecret = (
  client: ClientRecord,
  secretHash: string,
  graceSeconds: number,
  now: Date,
): ClientRecord => {
  const { previousSecretHash: _hash, previousSecretExpiresAt: _expiry, ...rest } = client;
  return {
    ...(graceSeconds > 0 ? rest : withTokensRevoked(rest)),
    secretHash,
    ...(graceSeconds > 0 && {
      previousSecretHash: client.secretHash,
      previousSecretExpiresAt: new Date(now.getTime() + graceSeconds * 1000).toISOString(),
    }),
  };
};

/** The client disabled at `now`, its live tokens revoked; disabling twice keeps the first time. */
export const withDisabled = (client: ClientRecord, now: Date): ClientRecord =>
  client.disabledAt !== undefined ? client : { ...withTokensRevoked(client), disabledAt: now.toISOString() };

/** Limits on failed client authentication at the token endpoint, counted per client id and source address. */
export interface AuthenticationThrottlePolicy {
  /** Failed attempts allowed in one window; the next one is refused until the window ends. */
  maxFailures: number;
  /** Seconds from the first failure until the count starts again by itself. */
  windowSeconds: number;
  /**
   * Secret checks one source address may spend on unknown (or disabled) clients in a window of
   * `windowSeconds`; past it they are refused without a derivation. A known client's secret is
   * always checked, so a flood never refuses a correct secret.
   */
  secretChecksPerAddress: number;
}

export const AUTHENTICATION_THROTTLE: AuthenticationThrottlePolicy = {
  maxFailures: 10,
  windowSeconds: 60,
  secretChecksPerAddress: 30,
};

/**
 * The policy with the window shortened by a setting (whole seconds, 1 to 60), which lets the local
 * runtime and its tests see a window end; a setting outside that is refused, loudly.
 */
export const authenticationThrottlePolicy = (
  windowSeconds: string | undefined,
  secretChecksPerAddress?: string,
): AuthenticationThrottlePolicy => {
  const policy = { ...AUTHENTICATION_THROTTLE };
  if (windowSeconds !== undefined) {
    const seconds = Number(windowSeconds);
    if (!/^\d+$/.test(windowSeconds) || seconds < 1 || seconds > AUTHENTICATION_THROTTLE.windowSeconds) {
      throw new Error(
        `CLIENT_AUTH_THROTTLE_WINDOW_SECONDS must be whole seconds from 1 to ${AUTHENTICATION_THROTTLE.windowSeconds}, not ${JSON.stringify(windowSeconds)}`,
      );
    }
    policy.windowSeconds = seconds;
  }
  if (secretChecksPerAddress !== undefined) {
    const checks = Number(secretChecksPerAddress);
    if (!/^\d+$/.test(secretChecksPerAddress) || checks > AUTHENTICATION_THROTTLE.secretChecksPerAddress) {
      throw new Error(
        `CLIENT_AUTH_SECRET_CHECKS_PER_ADDRESS must be a whole number from 0 to ${AUTHENTICATION_THROTTLE.secretChecksPerAddress}, not ${JSON.stringify(secretChecksPerAddress)}`,
      );
    }
    policy.secretChecksPerAddress = checks;
  }
  return policy;
};
