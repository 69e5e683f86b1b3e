import { optionalEnv } from '#shared/config';

/**
 * The stage's client authentication settings, shared by the token function and the authorizer:
 * CLIENT_SECRETS=false refuses client secrets for every client (`-c clientSecrets=false`);
 * REQUIRE_DPOP=true makes every token DPoP-bound (`-c requireDpop=true`). Server nonces are the
 * token function's alone (#adapters/access/dpop-nonce-secret).
 */
export const clientAuthenticationSettings = (): {
  clientSecretsAllowed: boolean;
  requireDpop: boolean;
} => {
  const flag = (name: string, byDefault: boolean): boolean => {
    const value = optionalEnv(name);
    if (value === undefined) return byDefault;
    if (value !== 'true' && value !== 'false') throw new Error(`${name} must be true or false, not ${value}`);
    return value === 'true';
  };
  return {
    clientSecretsAllowed: flag('CLIENT_SECRETS', true),
    requireDpop: flag('REQUIRE_DPOP', false),
  };
};
