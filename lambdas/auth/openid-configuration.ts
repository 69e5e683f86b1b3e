import type { APIGatewayProxyResult } from 'aws-lambda';
import { clientAuthenticationSettings } from '#adapters/access/client-authentication-settings';
import { authorizationServerMetadata } from '#domain/access/authorization-server-metadata';
import { publicUrl, requiredEnv } from '#shared/config';
import { jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';

const DISCOVERY_MAX_AGE_SECONDS = 300;

/**
 * GET /.well-known/openid-configuration. The answer is the same for every request, so shared
 * caches may keep it (and need no `Vary`) for five minutes.
 */
export const getOpenIdConfiguration =
  (issuer: () => string, baseUrl: () => string = issuer) =>
  async (): Promise<APIGatewayProxyResult> =>
    jsonResponse(
      200,
      authorizationServerMetadata(issuer(), baseUrl(), clientAuthenticationSettings().clientSecretsAllowed),
      {
        'Cache-Control': `public, max-age=${DISCOVERY_MAX_AGE_SECONDS}`,
      },
    );

export const handler = httpHandler(getOpenIdConfiguration(() => requiredEnv('ISSUER'), publicUrl));
