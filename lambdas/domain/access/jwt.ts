import type { TokenSigner } from './ports.ts';

const segment = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS (RFC 7515) over the claims, signed by the signer's key with its algorithm. */
export const signJwt = async (claims: object, signer: TokenSigner): Promise<string> => {
  const header = { alg: await signer.algorithm(), typ: 'JWT', kid: await signer.keyId() };
  const signingInput = `${segment(header)}.${segment(claims)}`;
  const signature = await signer.sign(Buffer.from(signingInput, 'ascii'));
  return `${signingInput}.${signature.toString('base64url')}`;
};
