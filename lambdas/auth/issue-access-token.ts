import { randomUUID } from 'node:crypto';
import { CLIENT_ID_PATTERN, type ClientRecord } from '#domain/client';
import type { ClientStore, TokenSigner } from '#domain/ports';
import { isScope, type Scope, splitScopes } from '#domain/scopes';
import { NO_CLIENT_SECRET_HASH, verifyClientSecret } from './client-secret.ts';
import { signJwt } from './jwt.ts';
import { InvalidClientError, InvalidScopeError } from './token-errors.ts';
import type { ClientCredentials, TokenRequest, TokenResponse } from './token-request.ts';

export const ACCESS_TOKEN_LIFETIME_SECONDS = 3600;

export interface TokenIssuerDependencies {
  clients: ClientStore;
  signer: TokenSigner;
  /** The `iss` claim; also the discovery document's issuer. */
  issuer: string;
  /** The `aud` claim the authorizer demands. */
  audience: string;
  /** Shorter than the spec's 3600 s only in local tests of client token renewal. */
  lifetimeSeconds?: number;
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
}

const authenticateClient = async (
  clients: ClientStore,
  credentials: ClientCredentials,
): Promise<ClientRecord> => {
  const client = CLIENT_ID_PATTERN.test(credentials.clientId)
    ? await clients.get(credentials.clientId)
    : undefined;
  // An unknown client costs the same scrypt as a known one: timing does not tell which ids exist.
  const secretMatches = await verifyClientSecret(
    credentials.secret,
    client?.secretHash ?? NO_CLIENT_SECRET_HASH,
  );
  if (client === undefined || !secretMatches) throw new InvalidClientError('Client authentication failed');
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
  const client = await authenticateClient(dependencies.clients, request.credentials);
  const scope = grantedScopes(client, request.scope).join(' ');
  const issuedAt = Math.floor(Date.now() / 1000);
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
  };
  const accessToken = await signJwt(claims, dependencies.signer);
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
