import { JwtVerifier } from 'aws-jwt-verify';
import type { JwtPayload } from 'aws-jwt-verify/jwt-model';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { TENANT_ID_PATTERN } from '#adapters/keys';
import { signerFromEnvironment } from '#adapters/signer';
import type { TokenSigner } from '#domain/ports';
import { splitScopes } from '#domain/scopes';
import type { JsonWebKeySet } from '#domain/token-signer';
import { ROUTES, type Route } from '#routes';
import { requiredEnv } from '#shared/config';
import { logger } from '#shared/logger';
import { observed } from '#shared/observability';
import { routePolicy } from './policy.ts';

export interface AuthorizerDependencies {
  signer: TokenSigner;
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
};

const fromEnvironment = (): AuthorizerDependencies => ({
  signer: signerFromEnvironment(),
  issuer: requiredEnv('ISSUER'),
  audience: requiredEnv('AUDIENCE'),
  routes: ROUTES,
});

/**
 * API Gateway REST TOKEN authorizer. The key set comes straight from the signer (KMS public
 * key or the local key file), handed to aws-jwt-verify so it never fetches over the network.
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
    const { signer, issuer, audience, routes } = dependencies();
    // Outside the try: a key that cannot be read is a fault (500), not a bad token (401).
    const verifier = verifierFor(issuer, audience, await signer.publicJwks());
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
    return {
      principalId: clientId,
      policyDocument: routePolicy(event.methodArn, splitScopes(scope), routes),
      context: { tenant: payload.tenant as string, clientId, scope },
    };
  };
};

// The token itself never reaches a log line: the caller is known only once it is verified.
export const handler = observed(createAuthorizer(fromEnvironment));
