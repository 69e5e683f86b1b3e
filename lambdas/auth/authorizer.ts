import { JwtVerifier } from 'aws-jwt-verify';
import type { JwtPayload } from 'aws-jwt-verify/jwt-model';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { tokenKeysFromEnvironment } from '#adapters/access/signer';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { TENANT_ID_PATTERN } from '#adapters/table/keys';
import { TOKEN_GENERATION_CLAIM, tokenRevocationReason } from '#domain/access/client';
import type { ClientStore, TokenKeys } from '#domain/access/ports';
import { splitScopes } from '#domain/access/scopes';
import type { JsonWebKeySet } from '#domain/access/token-signer';
import { ROUTES, type Route } from '#routes';
import { requiredEnv } from '#shared/config';
import { logger } from '#shared/logger';
import { observed } from '#shared/observability';
import { routePolicy } from './policy.ts';

export interface AuthorizerDependencies {
  keys: TokenKeys;
  /** Read once per invocation (API Gateway caches the result): a disabled client's tokens stop. */
  clients: Pick<ClientStore, 'get'>;
  issuer: string;
  audience: string;
  routes: readonly Route[];
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

const BEARER = /^Bearer +([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+)$/i;

/** Checks beyond signature, expiry, issuer and audience: the claims the handlers rely on. */
const checkClaims = ({ header, payload }: { header: { alg?: string }; payload: JwtPayload }): void => {
  if (header.alg !== 'RS256') throw new Error('Only RS256 tokens are accepted');
  if (typeof payload.exp !== 'number') throw new Error('The token has no exp claim');
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
});

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

  return async (event: APIGatewayTokenAuthorizerEvent): Promise<AuthorizerResult> => {
    const { keys, clients, issuer, audience, routes } = dependencies();
    // Outside the try: a key that cannot be read is a fault (500), not a bad token (401).
    const verifier = verifierFor(issuer, audience, await keys.publicJwks());
    let payload: JwtPayload;
    try {
      const token = BEARER.exec(event.authorizationToken?.trim() ?? '')?.[1];
      if (token === undefined) throw new Error('The Authorization header is not Bearer <JWT>');
      payload = verifier.verifySync(token);
    } catch (error) {
      logger.info('Access token refused', { reason: error instanceof Error ? error.message : String(error) });
      throw unauthorized();
    }
    const clientId = payload.sub as string;
    const scope = payload.scope as string;
    // Outside the try as well: a table that cannot be read is a fault, not a bad token.
    const revoked = tokenRevocationReason(await clients.get(clientId), {
      tenant: payload.tenant as string,
      generation: (payload[TOKEN_GENERATION_CLAIM] as number | undefined) ?? 0,
    });
    if (revoked !== undefined) {
      logger.info('Access token refused', { reason: revoked, clientId });
      throw unauthorized();
    }
    return {
      principalId: clientId,
      policyDocument: routePolicy(event.methodArn, splitScopes(scope), routes),
      context: { tenant: payload.tenant as string, clientId, scope },
    };
  };
};

// The token itself never reaches a log line: the caller is known only once it is verified.
export const handler = observed(createAuthorizer(fromEnvironment));
