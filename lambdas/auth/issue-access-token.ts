import { randomUUID } from 'node:crypto';
import {
  acceptedSecretHashes,
  CLIENT_ID_PATTERN,
  type ClientRecord,
  TOKEN_GENERATION_CLAIM,
} from '#domain/access/client';
import type {
  AuthenticationCaller,
  AuthenticationThrottle,
  ClientStore,
  TokenKeys,
} from '#domain/access/ports';
import { isScope, type Scope, splitScopes } from '#domain/access/scopes';
import type { Clock } from '#domain/commons/ports';
import { verifyClientSecretAgainst } from './client-secret.ts';
import { signJwt } from './jwt.ts';
import { ClientAuthenticationThrottledError, InvalidClientError, InvalidScopeError } from './token-errors.ts';
import type { ClientCredentials, TokenRequest, TokenResponse } from './token-request.ts';

export const ACCESS_TOKEN_LIFETIME_SECONDS = 3600;

export interface TokenIssuerDependencies {
  clients: ClientStore;
  keys: TokenKeys;
  /** The `iss` claim; also the discovery document's issuer. */
  issuer: string;
  /** The `aud` claim the authorizer demands. */
  audience: string;
  /** Shorter than the spec's 3600 s only in local tests of client token renewal. */
  lifetimeSeconds?: number;
  throttle: AuthenticationThrottle;
  clock: Clock;
}

/** The claims of every access token; `sub` and `client_id` are both the client id. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
  scope: string;
  tenant: string;
  client_id: string;
  /** The client's token generation when issued: the authorizer refuses the token once it has moved on. */
  [TOKEN_GENERATION_CLAIM]: number;
}

/**
 * Checks the client's secret. Every refusal takes the same path and time: an unknown id, a
 * disabled client and a wrong secret each cost one throttle read, one store read, two scrypt
 * derivations (the current hash, and the previous one or a stand-in) and one counted failure, so
 * nothing tells which ids exist. The check's place is claimed before the secret is checked, so
 * parallel wrong secrets get no more checks than the limit; a correct secret is never refused for
 * requests still in flight (it waits for their places) or sent from elsewhere.
 */
const authenticateClient = async (
  { clients, throttle, clock }: Pick<TokenIssuerDependencies, 'clients' | 'throttle' | 'clock'>,
  credentials: ClientCredentials,
  caller: AuthenticationCaller,
): Promise<ClientRecord> => {
  const now = clock.now();
  // Before anything else: a throttled caller costs no read and no CPU.
  const attempt = await throttle.check(caller, now);
  if (!attempt.allowed) {
    throw new ClientAuthenticationThrottledError(
      `Too many failed client authentications; retry after ${attempt.retryAfterSeconds} seconds`,
      attempt.retryAfterSeconds,
    );
  }
  const client = CLIENT_ID_PATTERN.test(credentials.clientId)
    ? await clients.get(credentials.clientId)
    : undefined;
  const secretMatches = await verifyClientSecretAgainst(
    credentials.secret,
    client === undefined ? [] : acceptedSecretHashes(client, now),
  );
  if (client === undefined || client.disabledAt !== undefined || !secretMatches) {
    // Counted before the answer: a caller learns of a failure only once it is counted.
    await throttle.failed(caller, now);
    throw new InvalidClientError('Client authentication failed');
  }
  // Gives the check's place back (and forgives the failures it saw): the next check has it.
  await throttle.succeeded(caller, attempt);
  return client;
};

// Echo back only names that are safe in an error_description (RFC 6749 5.2) and short.
const named = (scopes: string[]): string =>
  scopes.every((scope) => /^[A-Za-z0-9:._-]{1,64}$/.test(scope)) && scopes.length <= 8
    ? `: ${scopes.join(' ')}`
    : '';

/** No scope asked for: every scope the client is allowed. Otherwise each one asked for must be allowed. */
const grantedScopes = (client: ClientRecord, requested: string | undefined): Scope[] => {
  const asked = splitScopes(requested);
  if (asked.length === 0) return client.scopes;
  const unknown = asked.filter((scope) => !isScope(scope));
  if (unknown.length > 0) {
    throw new InvalidScopeError(`The request names an unknown scope${named(unknown)}`, [
      { name: 'scope', reason: 'names an unknown scope' },
    ]);
  }
  const notAllowed = asked.filter((scope) => !(client.scopes as string[]).includes(scope));
  if (notAllowed.length > 0) {
    throw new InvalidScopeError(`The client may not be granted the scope${named(notAllowed)}`, [
      { name: 'scope', reason: 'names a scope the client may not be granted' },
    ]);
  }
  return asked as Scope[];
};

export const issueAccessToken = async (
  dependencies: TokenIssuerDependencies,
  request: TokenRequest,
): Promise<{ response: TokenResponse; claims: AccessTokenClaims }> => {
  const client = await authenticateClient(dependencies, request.credentials, {
    clientId: request.credentials.clientId,
    sourceAddress: request.sourceAddress,
  });
  const scope = grantedScopes(client, request.scope).join(' ');
  const issuedAt = Math.floor(dependencies.clock.now().getTime() / 1000);
  const lifetime = dependencies.lifetimeSeconds ?? ACCESS_TOKEN_LIFETIME_SECONDS;
  const claims: AccessTokenClaims = {
    iss: dependencies.issuer,
    sub: client.clientId,
    aud: dependencies.audience,
    iat: issuedAt,
    exp: issuedAt + lifetime,
    jti: randomUUID(),
    scope,
    tenant: client.tenant,
    client_id: client.clientId,
    [TOKEN_GENERATION_CLAIM]: client.tokenGeneration ?? 0,
  };
  const accessToken = await signJwt(claims, await dependencies.keys.signingKey());
  return {
    response: {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: lifetime,
      scope,
    },
    claims,
  };
};
