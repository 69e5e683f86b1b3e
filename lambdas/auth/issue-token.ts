import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { DynamoDbAuthenticationThrottle } from '#adapters/access/authentication-throttle';
import { clientAuthenticationSettings } from '#adapters/access/client-authentication-settings';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { dpopNonceSecretFromEnvironment } from '#adapters/access/dpop-nonce-secret';
import { DynamoDbReplayGuard } from '#adapters/access/replay-guard';
import { tokenKeysFromEnvironment } from '#adapters/access/signer';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { authenticationThrottlePolicy } from '#domain/access/client';
import { dpopNonce } from '#domain/access/dpop';
import {
  ACCESS_TOKEN_LIFETIME_SECONDS,
  issueAccessToken,
  type TokenIssuerDependencies,
} from '#domain/access/issue-access-token';
import { systemClock } from '#domain/commons/ports';
import { optionalEnv, publicUrl, requiredEnv } from '#shared/config';
import { deadlineBound } from '#shared/deadline';
import { jsonResponse } from '#shared/http-event';
import { logger } from '#shared/logger';
import { countSecretCheckSkipped, flushMetrics } from '#shared/metrics';
import { problemResponses, unambiguousRequest } from '#shared/middleware';
import { parseTokenRequest } from './parse-token-request.ts';
import { tokenErrorResponses } from './token-error-responses.ts';

/** Local tests of client token renewal only (the stack never sets it): 1..3600 seconds. */
const localTokenLifetime = (): number | undefined => {
  const value = optionalEnv('LOCAL_ACCESS_TOKEN_LIFETIME_SECONDS');
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value) || Number(value) > ACCESS_TOKEN_LIFETIME_SECONDS)
    throw new Error(`LOCAL_ACCESS_TOKEN_LIFETIME_SECONDS must be 1..${ACCESS_TOKEN_LIFETIME_SECONDS}`);
  return Number(value);
};

/** Read when the function loads: a setting out of bounds stops it from starting at all. */
const throttlePolicy = authenticationThrottlePolicy(
  optionalEnv('CLIENT_AUTH_THROTTLE_WINDOW_SECONDS'),
  optionalEnv('CLIENT_AUTH_SECRET_CHECKS_PER_ADDRESS'),
);

/** Read per invocation: cheap, and a local runtime restarted on another port gets the new ISSUER. */
const tokenIssuerDependencies = async (): Promise<TokenIssuerDependencies> => {
  const lifetimeSeconds = localTokenLifetime();
  const dpopNonceSecret = await dpopNonceSecretFromEnvironment();
  return {
    clients: new DynamoDbClientStore(documentClient(), tableName()),
    keys: tokenKeysFromEnvironment(),
    issuer: requiredEnv('ISSUER'),
    audience: requiredEnv('AUDIENCE'),
    throttle: new DynamoDbAuthenticationThrottle(documentClient(), tableName(), throttlePolicy),
    clock: systemClock,
    replay: new DynamoDbReplayGuard(documentClient(), tableName()),
    tokenEndpoint: `${publicUrl()}/oauth/token`,
    onSecretCheckSkipped: countSecretCheckSkipped,
    onAssertionRefused: (clientId, reason) => logger.info('Client assertion refused', { clientId, reason }),
    ...clientAuthenticationSettings(),
    ...(dpopNonceSecret !== undefined && { dpopNonceSecret }),
    ...(lifetimeSeconds !== undefined && { lifetimeSeconds }),
  };
};

/** POST /oauth/token: OAuth 2.0 client credentials grant (RFC 6749 4.4). */
export const issueToken =
  (dependencies: () => TokenIssuerDependencies | Promise<TokenIssuerDependencies>) =>
  async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const request = parseTokenRequest(event);
    const issuer = await dependencies();
    // The metrics of a refusal too (skipped secret checks), published before the invocation ends.
    const { response, claims } = await issueAccessToken(issuer, request).finally(flushMetrics);
    logger.info('Access token issued', {
      clientId: claims.client_id,
      tenant: claims.tenant,
      scope: claims.scope,
      jti: claims.jti,
      authentication: request.credentials.method,
      bound: claims.cnf !== undefined,
      sourceAddress: request.sourceAddress,
    });
    // RFC 6749 5.1: token responses are never cached.
    return jsonResponse(200, response, {
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      ...(issuer.dpopNonceSecret !== undefined && {
        'DPoP-Nonce': dpopNonce(issuer.dpopNonceSecret, issuer.clock.now()),
      }),
    });
  };

export const createIssueTokenHandler = (
  dependencies: () => TokenIssuerDependencies | Promise<TokenIssuerDependencies>,
) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger, { clearState: true }))
    .use(problemResponses())
    // Registered after problemResponses(), so it sees errors first on the way out.
    .use(tokenErrorResponses())
    // Two Authorization headers name two clients: API Gateway and Node would each pick one.
    .use(unambiguousRequest())
    .handler(issueToken(dependencies));

export const handler = deadlineBound(createIssueTokenHandler(tokenIssuerDependencies));
