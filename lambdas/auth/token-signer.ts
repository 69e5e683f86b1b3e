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

/** Signs access tokens (RS256). On AWS the private key stays in KMS; locally it is a key file. */
export interface TokenSigner {
  /** The `kid` of the key that signs now. */
  keyId(): Promise<string>;
  /** RSASSA-PKCS1-v1_5 with SHA-256 over the JWS signing input. */
  sign(signingInput: Buffer): Promise<Buffer>;
  publicJwks(): Promise<JsonWebKeySet>;
}

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
