import type { APIGatewayProxyResult } from 'aws-lambda';
import { signerFromEnvironment } from '#adapters/signer';
import type { TokenSigner } from '#domain/ports';
import { jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';

/** Clients may cache the keys briefly; a rotated key is published before it signs. */
export const KEY_SET_MAX_AGE_SECONDS = 300;

/** GET /.well-known/jwks.json: the public keys that verify access tokens (RFC 7517). */
export const getKeySet = (signer: () => TokenSigner) => async (): Promise<APIGatewayProxyResult> =>
  jsonResponse(200, await signer().publicJwks(), {
    'Cache-Control': `public, max-age=${KEY_SET_MAX_AGE_SECONDS}`,
  });

export const handler = httpHandler(getKeySet(signerFromEnvironment));
