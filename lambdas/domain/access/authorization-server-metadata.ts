import { CLIENT_SIGNING_ALGORITHMS } from './client.ts';
import { DPOP_ALGORITHMS } from './dpop.ts';
import { SCOPES } from './scopes.ts';

/**
 * Authorization server metadata (RFC 8414), served at the OpenID discovery path that OAuth
 * client libraries try first. `issuer` is ISSUER exactly as the tokens' `iss` carries it; the
 * endpoints are under the configured public URL (PUBLIC_URL), since a stable issuer (a name that
 * outlives stages and domains) need not be an address anyone can reach. Nothing comes from the
 * request: a forged Host header is never reflected.
 */
export const authorizationServerMetadata = (
  issuer: string,
  baseUrl: string = issuer,
  clientSecretsAllowed = true,
) => {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    issuer,
    token_endpoint: `${base}/oauth/token`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: clientSecretsAllowed
      ? ['private_key_jwt', 'client_secret_basic', 'client_secret_post']
      : ['private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_SIGNING_ALGORITHMS],
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    scopes_supported: [...SCOPES],
    // Required by RFC 8414; there is no authorization endpoint, so no response type is supported.
    response_types_supported: [],
    service_documentation: `${base}/docs`,
  };
};
