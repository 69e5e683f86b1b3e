import type { APIGatewayProxyResult } from 'aws-lambda';
import { tokenKeysFromEnvironment } from '#adapters/access/signer';
import type { TokenKeys } from '#domain/access/ports';
import { jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';

/** Clients may cache the keys briefly: a rotation publishes a new key this long (and more) before it signs. */
export const KEY_SET_MAX_AGE_SECONDS = 300;

/**
 * GET /.well-known/jwks.json: the public keys that verify access tokens (RFC 7517): the signing
 * key, and during a rotation the one about to sign or the one before it, each by its `kid`.
 */
export const getKeySet = (keys: () => TokenKeys) => async (): Promise<APIGatewayProxyResult> =>
  jsonResponse(200, await keys().publicJwks(), {
    'Cache-Control': `public, max-age=${KEY_SET_MAX_AGE_SECONDS}`,
  });

export const handler = httpHandler(getKeySet(tokenKeysFromEnvironment));
