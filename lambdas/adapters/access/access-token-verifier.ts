import { JwtVerifier } from 'aws-jwt-verify';
import type { AccessTokenVerifier, VerifiedAccessToken } from '#domain/access/ports';
import type { JsonWebKeySet } from '#domain/access/token-signer';

/**
 * Access tokens verified with aws-jwt-verify, against a key set handed over (it never fetches
 * over the network): one verifier per issuer and audience, given a new key set only when it changes.
 */
export const createAccessTokenVerifier = (
  check: (token: VerifiedAccessToken) => void,
): AccessTokenVerifier => {
  const verifiers = new Map<string, { verifier: ReturnType<typeof createVerifier>; jwks?: JsonWebKeySet }>();
  const createVerifier = (issuer: string, audience: string) =>
    JwtVerifier.create({
      issuer,
      audience,
      // Only a cache key here: the key set is always handed over with cacheJwks().
      jwksUri: `${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
      customJwtCheck: ({ header, payload }) => check({ header, payload }),
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
  return {
    verify: (token, { issuer, audience, jwks }) => verifierFor(issuer, audience, jwks).verifySync(token),
  };
};
