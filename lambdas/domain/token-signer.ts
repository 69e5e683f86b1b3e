import { createHash, type KeyObject } from 'node:crypto';

/** A public key of the key set, in the form RFC 7517 gives it; `kid` is its RFC 7638 thumbprint. */
export type RsaSigningJwk = {
  kty: 'RSA';
  n: string;
  e: string;
  kid: string;
  alg: 'RS256';
  use: 'sig';
};

export type JsonWebKeySet = { keys: RsaSigningJwk[] };

/** RFC 7638: SHA-256 over the required members in lexicographic order, without whitespace. */
export const jwkThumbprint = (jwk: { e: string; n: string }): string =>
  createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: 'RSA', n: jwk.n }))
    .digest('base64url');

export const rsaSigningJwk = (publicKey: KeyObject): RsaSigningJwk => {
  const { kty, n, e } = publicKey.export({ format: 'jwk' });
  if (kty !== 'RSA' || n === undefined || e === undefined)
    throw new Error('The token signing key is not an RSA key');
  return { kty: 'RSA', n, e, kid: jwkThumbprint({ e, n }), alg: 'RS256', use: 'sig' };
};
