import { optionalEnv } from '#shared/config';

/**
 * The stage's client authentication settings, shared by the token function and the authorizer:
 * CLIENT_SECRETS=false refuses client secrets for every client (`-c clientSecrets=false`);
 * REQUIRE_DPOP=true makes every token DPoP-bound (`-c requireDpop=true`); DPOP_NONCE_SECRET, when
 * set, makes every DPoP proof carry a server nonce (RFC 9449 8).
 */
export const clientAuthenticationSettings = (): {
  clientSecretsAllowed: boolean;
  requireDpop: boolean;
  dpopNonceSecret?: string;
} => {
  const flag = (name: string, byDefault: boolean): boolean => {
    const value = optionalEnv(name);
    if (value === undefined) return byDefault;
    if (value !== 'true' && value !== 'false') throw new Error(`${name} must be true or false, not ${value}`);
    return value === 'true';
  };
  const nonceSecret = optionalEnv('DPOP_NONCE_SECRET');
  if (nonceSecret !== undefined && nonceSecret.length < 32) {
    throw new Error('DPOP_NONCE_SECRET must be at least 32 characters');
  }
  return {
    clientSecretsAllowed: flag('CLIENT_SECRETS', true),
    requireDpop: flag('REQUIRE_DPOP', false),
    ...(nonceSecret !== undefined && { dpopNonceSecret: nonceSecret }),
  };
};
