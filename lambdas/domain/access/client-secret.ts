import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Client secrets are kept as `scrypt$N$r$p$salt$hash` (salt and hash base64url), so the cost
 * parameters travel with each hash and can be raised later without breaking stored clients.
 */
interface ScryptParameters {
  N: number;
  r: number;
  p: number;
}

const CURRENT: ScryptParameters = { N: 16384, r: 8, p: 1 };
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const MAX_COST = 1 << 20;

const deriveKey = (
  secret: string,
  salt: Buffer,
  length: number,
  parameters: ScryptParameters,
): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const maxmem = 256 * parameters.N * parameters.r * parameters.p;
    scrypt(secret, salt, length, { ...parameters, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });

const format = (parameters: ScryptParameters, salt: Buffer, hash: Buffer): string =>
  `scrypt$${parameters.N}$${parameters.r}$${parameters.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;

const parse = (
  secretHash: string,
): { parameters: ScryptParameters; salt: Buffer; hash: Buffer } | undefined => {
  const [scheme, N, r, p, salt, hash] = secretHash.split('$');
  const parameters = { N: Number(N), r: Number(r), p: Number(p) };
  const bounded = (value: number, max: number) => Number.isSafeInteger(value) && value >= 1 && value <= max;
  // Bounds keep a tampered record from making one verification cost gigabytes of memory.
  if (
    scheme !== 'scrypt' ||
    !bounded(parameters.N, MAX_COST) ||
    !bounded(parameters.r, 32) ||
    !bounded(parameters.p, 16)
  ) {
    return undefined;
  }
  const saltBytes = Buffer.from(salt ?? '', 'base64url');
  const hashBytes = Buffer.from(hash ?? '', 'base64url');
  // A short (or empty) stored hash would be matched by almost any secret.
  if (saltBytes.length < SALT_BYTES || hashBytes.length < HASH_BYTES) return undefined;
  return { parameters, salt: saltBytes, hash: hashBytes };
};

export const hashClientSecret = async (secret: string): Promise<string> => {
  const salt = randomBytes(SALT_BYTES);
  return format(CURRENT, salt, await deriveKey(secret, salt, HASH_BYTES, CURRENT));
};

/**
 * Verifies against a hash no secret produces (all zero bytes), so that a request for an unknown
 * client spends the same scrypt as one for a known client.
 */
export const NO_CLIENT_SECRET_HASH = format(CURRENT, Buffer.alloc(SALT_BYTES), Buffer.alloc(HASH_BYTES));

export const verifyClientSecret = async (secret: string, secretHash: string): Promise<boolean> => {
  const stored = parse(secretHash);
  if (stored === undefined) {
    await deriveKey(secret, Buffer.alloc(SALT_BYTES), HASH_BYTES, CURRENT);
    return false;
  }
  const derived = await deriveKey(secret, stored.salt, stored.hash.length, stored.parameters);
  return timingSafeEqual(derived, stored.hash);
};

/** Secrets a client may hold at once: the current one, and the previous one during a rotation's grace. */
const SECRETS_CHECKED = 2;

/**
 * True when the secret matches one of the hashes (at most two). Always derives exactly two keys,
 * in parallel, standing in NO_CLIENT_SECRET_HASH for a missing one: a client in a rotation's grace,
 * an ordinary one and an unknown one all cost the same.
 */
export const verifyClientSecretAgainst = async (
  secret: string,
  hashes: readonly string[],
): Promise<boolean> => {
  if (hashes.length > SECRETS_CHECKED)
    throw new Error(`At most ${SECRETS_CHECKED} secret hashes are checked`);
  const padded = [...hashes, ...Array<string>(SECRETS_CHECKED - hashes.length).fill(NO_CLIENT_SECRET_HASH)];
  const started = performance.now();
  const results = await Promise.all(padded.map((hash) => verifyClientSecret(secret, hash)));
  const took = performance.now() - started;
  typicalCheckMs = typicalCheckMs === undefined ? took : typicalCheckMs * 0.8 + took * 0.2;
  return results.some(Boolean);
};

/** How long a check takes in this process lately (a moving average), once one was made. */
let typicalCheckMs: number | undefined;

/**
 * A refusal that derives nothing and takes as long as a check typically takes here, so a caller
 * cannot tell it from a wrong secret by its time. The first one in a process makes a real check,
 * to learn that time.
 */
export const refuseWithoutSecretCheck = async (): Promise<false> => {
  if (typicalCheckMs === undefined) await verifyClientSecretAgainst('', []);
  else await sleep(typicalCheckMs);
  return false;
};
