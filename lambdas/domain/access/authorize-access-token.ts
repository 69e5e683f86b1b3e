import { TENANT_ID_PATTERN, TOKEN_GENERATION_CLAIM, tokenRevocationReason } from './client.ts';
import { InvalidDpopProofError, verifyDpopProof } from './dpop.ts';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from './issue-access-token.ts';
import type {
  AccessTokenVerifier,
  ClientStore,
  ReplayGuard,
  TokenKeys,
  VerifiedAccessToken,
} from './ports.ts';
import { splitScopes } from './scopes.ts';
import { TOKEN_SIGNING_ALGORITHMS } from './token-signer.ts';

export interface AccessTokenAuthorizationDependencies {
  keys: TokenKeys;
  /** Read once per call: a disabled client's tokens stop. */
  clients: Pick<ClientStore, 'get'>;
  issuer: string;
  audience: string;
  verifier: AccessTokenVerifier;
  /** The jtis of DPoP proofs seen within their window. */
  replay: ReplayGuard;
  /** The public URL a DPoP proof's htu names (never an internal address). */
  publicUrl: string;
  /** Every token must be DPoP-bound (stage setting REQUIRE_DPOP). */
  requireDpop: boolean;
  now?: () => Date;
}

/** What a call presents: its Authorization header, and the request a DPoP proof must be of. */
export interface PresentedAccessToken {
  authorization: string | undefined;
  /** Undefined where the request cannot be seen (an API Gateway TOKEN authorizer): no proof can be checked. */
  request?: { method: string; path: string; dpopProof: string | undefined };
}

/** Who calls, or why the token is refused (the caller hears only 401). */
export type AccessTokenAuthorization =
  | {
      authorized: true;
      clientId: string;
      tenant: string;
      scope: string;
      /** The token's `jti`, and the thumbprint of the DPoP key it is bound to: who did what, as approvals record it. */
      tokenId?: string;
      dpopThumbprint?: string;
    }
  | { authorized: false; reason: string; clientId?: string };

const AUTHORIZATION = /^(Bearer|DPoP) +([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+)$/i;

/** How far a token's iat may run ahead of this clock. */
const CLOCK_SKEW_SECONDS = 10;

/** Header parameters this service understands in a `crit` list: none (RFC 7515 4.1.11). */
const UNDERSTOOD_CRITICAL: readonly string[] = [];

/**
 * Checks beyond signature, expiry, issuer and audience: the claims the handlers rely on. Given
 * to the verifier when it is made; throws what is wrong.
 */
export const checkAccessTokenClaims = ({ header, payload }: VerifiedAccessToken): void => {
  // The algorithm must also be the one the key set names for the token's kid (the verifier checks it).
  if (!(TOKEN_SIGNING_ALGORITHMS as readonly unknown[]).includes(header.alg)) {
    throw new Error(`Only ${TOKEN_SIGNING_ALGORITHMS.join(' and ')} tokens are accepted`);
  }
  if (
    header.crit !== undefined &&
    (!Array.isArray(header.crit) || header.crit.some((name) => !UNDERSTOOD_CRITICAL.includes(String(name))))
  ) {
    throw new Error('The token names a critical header this service does not understand');
  }
  if (typeof payload.exp !== 'number') throw new Error('The token has no exp claim');
  // No token of this issuer is made ahead of time or lives longer than the token endpoint gives.
  if (typeof payload.iat !== 'number') throw new Error('The token has no iat claim');
  if (payload.iat > Date.now() / 1000 + CLOCK_SKEW_SECONDS)
    throw new Error('The token was issued in the future');
  if (payload.exp - payload.iat > ACCESS_TOKEN_LIFETIME_SECONDS) {
    throw new Error(`The token lives longer than ${ACCESS_TOKEN_LIFETIME_SECONDS} s`);
  }
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  if (cnf !== undefined && (typeof cnf !== 'object' || cnf === null || typeof cnf.jkt !== 'string')) {
    throw new Error('The token has a cnf claim without a key thumbprint');
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('The token has no sub claim');
  if (typeof payload.tenant !== 'string' || !TENANT_ID_PATTERN.test(payload.tenant)) {
    throw new Error('The token has no valid tenant claim');
  }
  if (typeof payload.scope !== 'string') throw new Error('The token has no scope claim');
  const generation = payload[TOKEN_GENERATION_CLAIM];
  // Tokens issued before generations existed carry none: generation 0.
  if (generation !== undefined && !Number.isSafeInteger(generation)) {
    throw new Error(`The token's ${TOKEN_GENERATION_CLAIM} claim is not a whole number`);
  }
};

/**
 * Authorizes one call by its access token: verified with the key set (the current key and the
 * previous or next one), then checked against its client's record: a disabled client, one whose
 * tokens were revoked, or a scope withdrawn since is refused, and so is a bound token without a
 * fresh proof of this request.
 */
export const authorizeAccessToken = async (
  dependencies: AccessTokenAuthorizationDependencies,
  presented: PresentedAccessToken,
): Promise<AccessTokenAuthorization> => {
  const { keys, clients, issuer, audience, verifier } = dependencies;
  // Outside the try: a key that cannot be read is a fault (500), not a bad token (401).
  const jwks = await keys.publicJwks();
  let payload: Record<string, unknown>;
  let scheme: string;
  let token: string;
  try {
    const match = AUTHORIZATION.exec(presented.authorization?.trim() ?? '');
    if (match === null) throw new Error('The Authorization header is not Bearer <JWT> or DPoP <JWT>');
    scheme = (match[1] as string).toLowerCase();
    token = match[2] as string;
    payload = verifier.verify(token, { issuer, audience, jwks });
  } catch (error) {
    return { authorized: false, reason: error instanceof Error ? error.message : String(error) };
  }
  const clientId = payload.sub as string;
  const scope = payload.scope as string;
  // Outside the try as well: a table that cannot be read is a fault, not a bad token.
  const client = await clients.get(clientId);
  const revoked =
    tokenRevocationReason(client, {
      tenant: payload.tenant as string,
      generation: (payload[TOKEN_GENERATION_CLAIM] as number | undefined) ?? 0,
    }) ??
    // Scopes withdrawn from the client since the token was issued are withdrawn from the token too.
    (splitScopes(scope).some((granted) => !(client?.scopes as string[] | undefined)?.includes(granted))
      ? 'the token names a scope the client is no longer granted'
      : undefined) ??
    (await bindingRefusal(dependencies, presented, {
      scheme,
      token,
      payload,
      requireDpop: client?.requireDpop === true,
    }));
  if (revoked !== undefined) return { authorized: false, reason: revoked, clientId };
  const jkt = (payload.cnf as { jkt?: unknown } | undefined)?.jkt;
  return {
    authorized: true,
    clientId,
    tenant: payload.tenant as string,
    scope,
    ...(typeof payload.jti === 'string' && { tokenId: payload.jti }),
    ...(typeof jkt === 'string' && { dpopThumbprint: jkt }),
  };
};

/**
 * RFC 9449 7: a bound token (cnf.jkt) is accepted only as `DPoP <token>` with a fresh proof of
 * this request signed by the bound key, whose jti is recorded (a replay is refused); an unbound
 * token only as Bearer, and not at all where DPoP is required. Undefined when accepted.
 */
const bindingRefusal = async (
  dependencies: AccessTokenAuthorizationDependencies,
  { request }: PresentedAccessToken,
  presented: { scheme: string; token: string; payload: Record<string, unknown>; requireDpop: boolean },
): Promise<string | undefined> => {
  const jkt = (presented.payload.cnf as { jkt?: string } | undefined)?.jkt;
  if (jkt === undefined) {
    if (presented.scheme === 'dpop') return 'an unbound token was sent as DPoP';
    if (dependencies.requireDpop || presented.requireDpop) return 'this client must use DPoP-bound tokens';
    return undefined;
  }
  if (presented.scheme !== 'dpop') return 'a DPoP-bound token was sent as Bearer';
  // A TOKEN authorizer sees no proof: a bound token needs the REQUEST authorizer.
  if (request === undefined) return 'the DPoP proof cannot be checked here';
  const now = dependencies.now?.() ?? new Date();
  try {
    const proof = await verifyDpopProof(request.dpopProof, {
      method: request.method,
      url: `${dependencies.publicUrl}${request.path}`,
      accessToken: presented.token,
      // No server nonce here: API Gateway's 401 cannot carry the DPoP-Nonce a client would need
      // (RFC 9449 9); nonces guard the token endpoint (section 8), the jti and iat window this one.
      now,
    });
    if (proof.jkt !== jkt) return 'the DPoP proof is signed by another key than the token is bound to';
    // Outside a try that turns faults into refusals: a table that cannot be written is a fault.
    if (!(await dependencies.replay.firstUse('dpop', proof.jkt, proof.jti, proof.staleAt, now))) {
      return 'the DPoP proof was used before';
    }
    return undefined;
  } catch (error) {
    if (error instanceof InvalidDpopProofError) return error.message;
    throw error;
  }
};
