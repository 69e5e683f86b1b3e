import { JwtVerifier } from 'aws-jwt-verify';
import type { JwtPayload } from 'aws-jwt-verify/jwt-model';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayRequestAuthorizerEvent,
  APIGatewayTokenAuthorizerEvent,
} from 'aws-lambda';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { DynamoDbReplayGuard } from '#adapters/access/replay-guard';
import { tokenKeysFromEnvironment } from '#adapters/access/signer';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { TENANT_ID_PATTERN } from '#adapters/table/keys';
import { TOKEN_GENERATION_CLAIM, tokenRevocationReason } from '#domain/access/client';
import type { ClientStore, ReplayGuard, TokenKeys } from '#domain/access/ports';
import { splitScopes } from '#domain/access/scopes';
import { apiStageOf, usageIdentifierKey } from '#domain/access/tenant-rate-limit';
import { type JsonWebKeySet, TOKEN_SIGNING_ALGORITHMS } from '#domain/access/token-signer';
import { ROUTES, type Route } from '#routes';
import { publicUrl, requiredEnv } from '#shared/config';
import { logger } from '#shared/logger';
import { observed } from '#shared/observability';
import { clientAuthenticationSettings } from './client-authentication-settings.ts';
import { InvalidDpopProofError, verifyDpopProof } from './dpop.ts';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from './issue-access-token.ts';
import { routePolicy } from './policy.ts';

export interface AuthorizerDependencies {
  keys: TokenKeys;
  /** Read once per invocation (API Gateway caches the result): a disabled client's tokens stop. */
  clients: Pick<ClientStore, 'get'>;
  issuer: string;
  audience: string;
  routes: readonly Route[];
  /** The jtis of DPoP proofs seen within their window. */
  replay: ReplayGuard;
  /** The public URL a DPoP proof's htu names (never an internal address). */
  publicUrl: string;
  /** Every token must be DPoP-bound (stage setting REQUIRE_DPOP). */
  requireDpop: boolean;
  now?: () => Date;
}

/** What the authorizer hands to the handlers (requestContext.authorizer); see callerOf(). */
export interface AuthorizerContext {
  [name: string]: string;
  tenant: string;
  clientId: string;
  scope: string;
}

export type AuthorizerResult = APIGatewayAuthorizerResult & { context: AuthorizerContext };

/** The one message API Gateway turns into its UNAUTHORIZED (401) response. */
const unauthorized = () => new Error('Unauthorized');

const AUTHORIZATION = /^(Bearer|DPoP) +([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+)$/i;

/** How far a token's iat may run ahead of this clock. */
const CLOCK_SKEW_SECONDS = 10;

/** Header parameters this service understands in a `crit` list: none (RFC 7515 4.1.11). */
const UNDERSTOOD_CRITICAL: readonly string[] = [];

/** Checks beyond signature, expiry, issuer and audience: the claims the handlers rely on. */
const checkClaims = ({
  header,
  payload,
}: {
  header: { alg?: string; crit?: unknown };
  payload: JwtPayload;
}): void => {
  // The algorithm must also be the one the key set names for the token's kid (aws-jwt-verify checks it).
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

const fromEnvironment = (): AuthorizerDependencies => ({
  keys: tokenKeysFromEnvironment(),
  clients: new DynamoDbClientStore(documentClient(), tableName()),
  issuer: requiredEnv('ISSUER'),
  audience: requiredEnv('AUDIENCE'),
  routes: ROUTES,
  replay: new DynamoDbReplayGuard(documentClient(), tableName()),
  publicUrl: publicUrl(),
  ...clientAuthenticationSettings(),
});

/** The header, whatever its case, from a REQUEST authorizer event. */
const headerOf = (event: APIGatewayRequestAuthorizerEvent, name: string): string | undefined => {
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === name && typeof value === 'string') return value;
  }
  return undefined;
};

/**
 * API Gateway REST TOKEN authorizer. The key set (KMS public keys or the local key files, the
 * current and the previous or next one) is handed to aws-jwt-verify, which picks the key by the
 * token's `kid` and never fetches over the network. A verified token is then checked against its
 * client's record: a disabled client, or one whose tokens were revoked, is refused.
 */
export const createAuthorizer = (dependencies: () => AuthorizerDependencies) => {
  const verifiers = new Map<string, { verifier: ReturnType<typeof createVerifier>; jwks?: JsonWebKeySet }>();
  const createVerifier = (issuer: string, audience: string) =>
    JwtVerifier.create({
      issuer,
      audience,
      // Only a cache key here: the key set is always handed over with cacheJwks().
      jwksUri: `${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
      customJwtCheck: checkClaims,
    });
  const verifierFor = (issuer: string, audience: string, jwks: JsonWebKeySet) => {
    const key = `${issuer} ${audience}`;
    let entry = verifiers.get(key);
    if (entry === undefined) {
      entry = { verifier: createVerifier(issuer, audience) };
      verifiers.set(key, entry);
    }
    if (entry.jwks !== jwks) {
      entry.verifier.cacheJwks(jwks);
      entry.jwks = jwks;
    }
    return entry.verifier;
  };

  return async (
    event: APIGatewayTokenAuthorizerEvent | APIGatewayRequestAuthorizerEvent,
  ): Promise<AuthorizerResult> => {
    const settings = dependencies();
    const { keys, clients, issuer, audience, routes } = settings;
    // Outside the try: a key that cannot be read is a fault (500), not a bad token (401).
    const verifier = verifierFor(issuer, audience, await keys.publicJwks());
    const authorization =
      event.type === 'TOKEN' ? event.authorizationToken : headerOf(event, 'authorization');
    let payload: JwtPayload;
    let scheme: string;
    let token: string;
    try {
      const match = AUTHORIZATION.exec(authorization?.trim() ?? '');
      if (match === null) throw new Error('The Authorization header is not Bearer <JWT> or DPoP <JWT>');
      scheme = (match[1] as string).toLowerCase();
      token = match[2] as string;
      payload = verifier.verifySync(token);
    } catch (error) {
      logger.info('Access token refused', { reason: error instanceof Error ? error.message : String(error) });
      throw unauthorized();
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
      (await bindingRefusal(settings, event, {
        scheme,
        token,
        payload,
        requireDpop: client?.requireDpop === true,
      }));
    if (revoked !== undefined) {
      logger.info('Access token refused', { reason: revoked, clientId });
      throw unauthorized();
    }
    const tenant = payload.tenant as string;
    const { apiId, stage } = apiStageOf(event.methodArn);
    return {
      principalId: clientId,
      policyDocument: routePolicy(event.methodArn, routes),
      // API Gateway throttles by this key's usage plan: one key per tenant, so one bucket per tenant.
      usageIdentifierKey: usageIdentifierKey(apiId, stage, tenant),
      // The token's id and DPoP key go with it, for what records who did what (approvals).
      context: {
        tenant,
        clientId,
        scope,
        ...(typeof payload.jti === 'string' && { tokenId: payload.jti }),
        ...(typeof (payload.cnf as { jkt?: unknown } | undefined)?.jkt === 'string' && {
          dpopThumbprint: (payload.cnf as { jkt: string }).jkt,
        }),
      },
    };
  };
};

/**
 * RFC 9449 7: a bound token (cnf.jkt) is accepted only as `DPoP <token>` with a fresh proof of
 * this request signed by the bound key, whose jti is recorded (a replay is refused); an unbound
 * token only as Bearer, and not at all where DPoP is required. Undefined when accepted.
 */
const bindingRefusal = async (
  settings: AuthorizerDependencies,
  event: APIGatewayTokenAuthorizerEvent | APIGatewayRequestAuthorizerEvent,
  presented: { scheme: string; token: string; payload: JwtPayload; requireDpop: boolean },
): Promise<string | undefined> => {
  const jkt = (presented.payload.cnf as { jkt?: string } | undefined)?.jkt;
  if (jkt === undefined) {
    if (presented.scheme === 'dpop') return 'an unbound token was sent as DPoP';
    if (settings.requireDpop || presented.requireDpop) return 'this client must use DPoP-bound tokens';
    return undefined;
  }
  if (presented.scheme !== 'dpop') return 'a DPoP-bound token was sent as Bearer';
  // A TOKEN authorizer sees no proof: a bound token needs the REQUEST authorizer.
  if (event.type !== 'REQUEST') return 'the DPoP proof cannot be checked here';
  const now = settings.now?.() ?? new Date();
  try {
    const proof = await verifyDpopProof(headerOf(event, 'dpop'), {
      method: event.httpMethod,
      url: `${settings.publicUrl}${event.path}`,
      accessToken: presented.token,
      // No server nonce here: API Gateway's 401 cannot carry the DPoP-Nonce a client would need
      // (RFC 9449 9); nonces guard the token endpoint (section 8), the jti and iat window this one.
      now,
    });
    if (proof.jkt !== jkt) return 'the DPoP proof is signed by another key than the token is bound to';
    // Outside a try that turns faults into refusals: a table that cannot be written is a fault.
    if (!(await settings.replay.firstUse('dpop', proof.jkt, proof.jti, proof.staleAt, now))) {
      return 'the DPoP proof was used before';
    }
    return undefined;
  } catch (error) {
    if (error instanceof InvalidDpopProofError) return error.message;
    throw error;
  }
};

// The token itself never reaches a log line: the caller is known only once it is verified.
export const handler = observed(createAuthorizer(fromEnvironment));
