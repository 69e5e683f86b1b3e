import type {
  APIGatewayAuthorizerResult,
  APIGatewayRequestAuthorizerEvent,
  APIGatewayTokenAuthorizerEvent,
} from 'aws-lambda';
import { createAccessTokenVerifier } from '#adapters/access/access-token-verifier';
import { clientAuthenticationSettings } from '#adapters/access/client-authentication-settings';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { DynamoDbReplayGuard } from '#adapters/access/replay-guard';
import { routePolicy } from '#adapters/access/route-policy';
import { tokenKeysFromEnvironment } from '#adapters/access/signer';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import {
  type AccessTokenAuthorizationDependencies,
  authorizeAccessToken,
  checkAccessTokenClaims,
} from '#domain/access/authorize-access-token';
import { apiStageOf, usageIdentifierKey } from '#domain/access/tenant-rate-limit';
import { ROUTES, type Route } from '#routes';
import { publicUrl, requiredEnv } from '#shared/config';
import { logger } from '#shared/logger';
import { observed } from '#shared/observability';

export type AuthorizerDependencies = Omit<AccessTokenAuthorizationDependencies, 'verifier'> & {
  routes: readonly Route[];
};

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
 * API Gateway REST authorizer (TOKEN, or REQUEST where DPoP proofs are checked): the token is
 * authorized by #domain/access/authorize-access-token; a refusal is API Gateway's 401.
 */
export const createAuthorizer = (dependencies: () => AuthorizerDependencies) => {
  const verifier = createAccessTokenVerifier(checkAccessTokenClaims);
  return async (
    event: APIGatewayTokenAuthorizerEvent | APIGatewayRequestAuthorizerEvent,
  ): Promise<AuthorizerResult> => {
    const settings = dependencies();
    const authorization = await authorizeAccessToken(
      { ...settings, verifier },
      event.type === 'TOKEN'
        ? { authorization: event.authorizationToken }
        : {
            authorization: headerOf(event, 'authorization'),
            request: { method: event.httpMethod, path: event.path, dpopProof: headerOf(event, 'dpop') },
          },
    );
    if (!authorization.authorized) {
      const { reason, clientId } = authorization;
      logger.info('Access token refused', { reason, ...(clientId !== undefined && { clientId }) });
      throw unauthorized();
    }
    const { clientId, tenant, scope, tokenId, dpopThumbprint } = authorization;
    const { apiId, stage } = apiStageOf(event.methodArn);
    return {
      principalId: clientId,
      policyDocument: routePolicy(event.methodArn, settings.routes),
      // API Gateway throttles by this key's usage plan: one key per tenant, so one bucket per tenant.
      usageIdentifierKey: usageIdentifierKey(apiId, stage, tenant),
      // The token's id and DPoP key go with it, for what records who did what (approvals).
      context: {
        tenant,
        clientId,
        scope,
        ...(tokenId !== undefined && { tokenId }),
        ...(dpopThumbprint !== undefined && { dpopThumbprint }),
      },
    };
  };
};

// The token itself never reaches a log line: the caller is known only once it is verified.
export const handler = observed(createAuthorizer(fromEnvironment));
