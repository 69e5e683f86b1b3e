import { calculateJwkThumbprint, type JWK } from 'jose';
import {
  CLIENT_SIGNING_ALGORITHMS,
  type ClientJwk,
  type ClientJwkSet,
  type ClientSigningAlgorithm,
} from './client.ts';

/** A client's key set stays small: the key in use, the next one during a rotation, a spare. */
export const MAX_CLIENT_KEYS = 5;
const MIN_RSA_BITS = 2048;

/** Members that only a private (or symmetric) key has: a file with any of them is refused whole. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export class InvalidClientKeysError extends Error {
  override name = 'InvalidClientKeysError';
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

const algorithmOf = (jwk: Record<string, unknown>): ClientSigningAlgorithm | string => {
  if (jwk.kty === 'EC') return jwk.crv === 'P-256' ? 'ES256' : `EC ${String(jwk.crv)}`;
  if (jwk.kty === 'OKP') return jwk.crv === 'Ed25519' ? 'EdDSA' : `OKP ${String(jwk.crv)}`;
  // An RSA key signs PS256 here, never RS256 (FAPI 2.0).
  if (jwk.kty === 'RSA') return 'PS256';
  return `kty ${String(jwk.kty)}`;
};

const rsaBits = (modulus: unknown): number =>
  typeof modulus === 'string' ? Buffer.from(modulus, 'base64url').length * 8 : 0;

/**
 * A client's public keys from a JWK Set (the text of the file an operator hands over): ES256 (EC
 * P-256), PS256 (RSA, 2048 bits or more) or EdDSA (Ed25519). Every key gets its `alg` and a `kid`
 * (its RFC 7638 thumbprint unless it has one). Private keys, other algorithms and repeated kids are
 * refused, so a mistake in the file never reaches the token endpoint.
 */
export const parseClientJwks = async (text: string): Promise<ClientJwkSet> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidClientKeysError(['the key file is not JSON (a JWK Set: {"keys": [...]})']);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new InvalidClientKeysError([
      'the key file is not a JWK Set with at least one key ({"keys": [...]})',
    ]);
  }
  if (keys.length > MAX_CLIENT_KEYS) {
    throw new InvalidClientKeysError([
      `a client has at most ${MAX_CLIENT_KEYS} keys, the file has ${keys.length}`,
    ]);
  }
  const problems: string[] = [];
  const result: ClientJwk[] = [];
  for (const [index, key] of keys.entries()) {
    const name = `key ${index + 1}`;
    if (key === null || typeof key !== 'object' || Array.isArray(key)) {
      problems.push(`${name} is not a JSON object`);
      continue;
    }
    const jwk = key as Record<string, unknown>;
    const secret = PRIVATE_MEMBERS.filter((member) => member in jwk);
    if (secret.length > 0) {
      problems.push(`${name} is a private key (it has ${secret.join(', ')}): give the public key only`);
      continue;
    }
    const algorithm = algorithmOf(jwk);
    if (!(CLIENT_SIGNING_ALGORITHMS as readonly string[]).includes(algorithm)) {
      problems.push(`${name} (${algorithm}) is none of ES256 (EC P-256), PS256 (RSA) or EdDSA (Ed25519)`);
      continue;
    }
    if (jwk.alg !== undefined && jwk.alg !== algorithm) {
      problems.push(`${name} names alg ${String(jwk.alg)}; a ${String(jwk.kty)} key here signs ${algorithm}`);
      continue;
    }
    if (jwk.use !== undefined && jwk.use !== 'sig') {
      problems.push(`${name} is for use ${String(jwk.use)}, not sig`);
      continue;
    }
    if (jwk.kty === 'RSA' && rsaBits(jwk.n) < MIN_RSA_BITS) {
      problems.push(`${name} has ${rsaBits(jwk.n)} bits, fewer than ${MIN_RSA_BITS}`);
      continue;
    }
    let thumbprint: string;
    try {
      thumbprint = await calculateJwkThumbprint(jwk as JWK);
    } catch (error) {
      problems.push(`${name} is not a valid key: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const kid = jwk.kid ?? thumbprint;
    if (typeof kid !== 'string' || !/^[A-Za-z0-9._~:-]{1,128}$/.test(kid)) {
      problems.push(`${name} has a kid that is not 1 to 128 characters of A-Z a-z 0-9 . _ ~ : -`);
      continue;
    }
    if (result.some((other) => other.kid === kid)) {
      problems.push(`${name} repeats the kid ${kid}`);
      continue;
    }
    const publicMembers = Object.fromEntries(
      Object.entries(jwk).filter(([member]) => ['kty', 'crv', 'x', 'y', 'n', 'e'].includes(member)),
    );
    result.push({
      ...publicMembers,
      kty: jwk.kty as ClientJwk['kty'],
      kid,
      alg: algorithm as ClientSigningAlgorithm,
    });
  }
  if (problems.length > 0) throw new InvalidClientKeysError(problems);
  return { keys: result };
};
