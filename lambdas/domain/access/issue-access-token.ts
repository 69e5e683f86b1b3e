import { randomUUID } from 'node:crypto';
import type { Clock } from '../commons/ports.ts';
import {
  acceptedSecretHashes,
  allowedAuthMethods,
  CLIENT_ID_PATTERN,
  type ClientJwkSet,
  type ClientRecord,
  TOKEN_GENERATION_CLAIM,
} from './client.ts';
import { InvalidAssertionError, type VerifiedAssertion, verifyClientAssertion } from './client-assertion.ts';
import { refuseWithoutSecretCheck, verifyClientSecretAgainst } from './client-secret.ts';
import { dpopNonce, InvalidDpopProofError, verifyDpopProof } from './dpop.ts';
import { signJwt } from './jwt.ts';
import type {
  AuthenticationCaller,
  AuthenticationThrottle,
  ClientStore,
  ReplayGuard,
  TokenKeys,
} from './ports.ts';
import { isScope, type Scope, splitScopes } from './scopes.ts';
import {
  ClientAuthenticationThrottledError,
  InvalidClientError,
  InvalidDpopProofRequestError,
  InvalidScopeError,
} from './token-errors.ts';
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
  /** Remembers the jti of each client assertion and DPoP proof. */
  replay: ReplayGuard;
  /** The token endpoint's public URL: an assertion's aud may name it, a DPoP proof's htu must. */
  tokenEndpoint: string;
  /** False on a stage that refuses client secrets (`-c clientSecrets=false`). */
  clientSecretsAllowed: boolean;
  /** Every client's tokens must be DPoP-bound (a stage setting). */
  requireDpop: boolean;
  /** When set, DPoP proofs must carry a server nonce made with this secret (RFC 9449 8). */
  dpopNonceSecret?: string;
  /** Told of each refusal made without a secret check (a metric counts these). */
  onSecretCheckSkipped?: () => void;
  /** Told why a client assertion was refused: the client hears only invalid_client. */
  onAssertionRefused?: (clientId: string, reason: string) => void;
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
  /** RFC 9449 6: the thumbprint of the key the token is bound to. */
  cnf?: { jkt: string };
}

/**
 * Checks the client's secret. Every refusal takes the same path and time: an unknown id, a
 * disabled client and a wrong secret each cost one throttle read, one store read, two scrypt
 * derivations (the current hash, and the previous one or a stand-in) and one counted failure, so
 * nothing tells which ids exist. The check's place is claimed before the secret is checked, so
 * parallel wrong secrets get no more checks than the limit; a correct secret is never refused for
 * requests still in flight (it waits for their places) or sent from elsewhere.
 *
 * Each source address has a budget of checks per window besides: past it, an unknown or disabled
 * client's request is refused without a derivation (in the time one takes), so a flood of made-up
 * ids costs the service a read and a few writes each, not two derivations. A known client's secret
 * is still checked: a correct one is never refused for the flood.
 */
const authenticateClient = async (
  {
    clients,
    throttle,
    clock,
    onSecretCheckSkipped,
  }: Pick<TokenIssuerDependencies, 'clients' | 'throttle' | 'clock' | 'onSecretCheckSkipped'>,
  credentials: Extract<ClientCredentials, { secret: string }>,
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
  const [client, withinBudget] = await Promise.all([
    CLIENT_ID_PATTERN.test(credentials.clientId) ? clients.get(credentials.clientId) : undefined,
    throttle.spendAddressBudget(caller.sourceAddress, now),
  ]);
  const enabled = client !== undefined && client.disabledAt === undefined;
  const secretMatches =
    enabled || withinBudget
      ? await verifyClientSecretAgainst(
          credentials.secret,
          client === undefined ? [] : acceptedSecretHashes(client, now),
        )
      : await skipSecretCheck(onSecretCheckSkipped);
  if (client === undefined || client.disabledAt !== undefined || !secretMatches) {
    // Counted before the answer: a caller learns of a failure only once it is counted.
    await throttle.failed(caller, now);
    throw new InvalidClientError('Client authentication failed');
  }
  // Gives the check's place back (and forgives the failures it saw): the next check has it.
  await throttle.succeeded(caller, attempt);
  return client;
};

/** Counted where it happens, so the count is of derivations not made. */
const skipSecretCheck = (onSkipped: (() => void) | undefined): Promise<false> => {
  onSkipped?.();
  return refuseWithoutSecretCheck();
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

const assertionRefused = (
  { onAssertionRefused }: Pick<TokenIssuerDependencies, 'onAssertionRefused'>,
  clientId: string,
  reason: string,
) => {
  onAssertionRefused?.(clientId, reason);
  return new InvalidClientError('Client authentication failed');
};

/**
 * private_key_jwt (RFC 7523): the assertion is verified against the client's keys; an unknown
 * client, a client without keys and every bad assertion get the same answer. Its jti is
 * recorded by recordAssertion() once the request is otherwise good. Costs no derivation, so it
 * spends nothing of the secret checks' throttle.
 */
const authenticateByAssertion = async (
  dependencies: TokenIssuerDependencies,
  credentials: Extract<ClientCredentials, { method: 'private_key_jwt' }>,
): Promise<{ client: ClientRecord; assertion: VerifiedAssertion }> => {
  const { clients, clock, issuer, tokenEndpoint } = dependencies;
  const now = clock.now();
  const client = CLIENT_ID_PATTERN.test(credentials.clientId)
    ? await clients.get(credentials.clientId)
    : undefined;
  const refused = (reason: string) => assertionRefused(dependencies, credentials.clientId, reason);
  if (client === undefined || client.disabledAt !== undefined) throw refused('no such client');
  if (!allowedAuthMethods(client, { clientSecretsAllowed: true }).includes('private_key_jwt')) {
    throw refused('the client may not use private_key_jwt');
  }
  let verified: VerifiedAssertion;
  try {
    verified = await verifyClientAssertion(credentials.assertion, {
      clientId: client.clientId,
      jwks: client.jwks as ClientJwkSet,
      audiences: [issuer, tokenEndpoint],
      now,
    });
  } catch (error) {
    if (error instanceof InvalidAssertionError) throw refused(error.message);
    throw error;
  }
  return { client, assertion: verified };
};

/**
 * An assertion is used once: its jti is recorded as the token is issued, so a refusal before
 * that (a DPoP proof asked to carry a server nonce, say) leaves it good for the request sent again.
 */
const recordAssertion = async (
  dependencies: TokenIssuerDependencies,
  client: ClientRecord,
  assertion: VerifiedAssertion,
): Promise<void> => {
  const now = dependencies.clock.now();
  if (
    !(await dependencies.replay.firstUse('assertion', client.clientId, assertion.jti, assertion.exp, now))
  ) {
    throw assertionRefused(dependencies, client.clientId, 'the assertion was used before (its jti is known)');
  }
};

/** RFC 9449 5: a proof at the token endpoint binds the token to its key; some clients must send one. */
const tokenBinding = async (
  dependencies: TokenIssuerDependencies,
  client: ClientRecord,
  proof: string | undefined,
): Promise<{ jkt: string } | undefined> => {
  if (proof === undefined) {
    if (dependencies.requireDpop || client.requireDpop === true) {
      throw new InvalidDpopProofRequestError('This client must send a DPoP proof for a bound token');
    }
    return undefined;
  }
  const now = dependencies.clock.now();
  try {
    const verified = await verifyDpopProof(proof, {
      method: 'POST',
      url: dependencies.tokenEndpoint,
      now,
      ...(dependencies.dpopNonceSecret !== undefined && { nonceSecret: dependencies.dpopNonceSecret }),
    });
    if (!(await dependencies.replay.firstUse('dpop', verified.jkt, verified.jti, verified.staleAt, now))) {
      throw new InvalidDpopProofError('the DPoP proof was used before');
    }
    return { jkt: verified.jkt };
  } catch (error) {
    if (error instanceof InvalidDpopProofError) {
      const { dpopNonceSecret } = dependencies;
      throw new InvalidDpopProofRequestError(
        error.message,
        error.error,
        dpopNonceSecret === undefined ? undefined : dpopNonce(dpopNonceSecret, now),
      );
    }
    throw error;
  }
};

export const issueAccessToken = async (
  dependencies: TokenIssuerDependencies,
  request: TokenRequest,
): Promise<{ response: TokenResponse; claims: AccessTokenClaims }> => {
  const { credentials } = request;
  // Before any derivation: a stage without secrets spends nothing on one.
  if (credentials.method !== 'private_key_jwt' && !dependencies.clientSecretsAllowed) {
    throw new InvalidClientError(
      'This service does not accept client secrets: authenticate with private_key_jwt',
    );
  }
  const { client, assertion } =
    credentials.method === 'private_key_jwt'
      ? await authenticateByAssertion(dependencies, credentials)
      : {
          client: await authenticateClient(dependencies, credentials, {
            clientId: credentials.clientId,
            sourceAddress: request.sourceAddress,
          }),
          assertion: undefined,
        };
  // After the secret check, so a refusal here tells nothing a wrong secret would not.
  if (!allowedAuthMethods(client, dependencies).includes(credentials.method)) {
    throw new InvalidClientError(`This client may not authenticate with ${credentials.method}`);
  }
  const binding = await tokenBinding(dependencies, client, request.dpopProof);
  const scope = grantedScopes(client, request.scope).join(' ');
  if (assertion !== undefined) await recordAssertion(dependencies, client, assertion);
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
    ...(binding !== undefined && { cnf: binding }),
  };
  const accessToken = await signJwt(claims, await dependencies.keys.signingKey());
  return {
    response: {
      access_token: accessToken,
      token_type: binding === undefined ? 'Bearer' : 'DPoP',
      expires_in: lifetime,
      scope,
    },
    claims,
  };
};
