import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TokenKeys, TokenSigner } from '#domain/access/ports';
import { type JsonWebKeySet, signingJwk, type TokenSigningAlgorithm } from '#domain/access/token-signer';
import { checkStandInCall } from '../aws/stand-ins.ts';

/** The size of the RSA keys this service makes, and the least it signs with. */
export const SIGNING_KEY_BITS = 2048;

/** The algorithm a new data folder's first key signs with (FAPI 2.0); a key file kept signs as it is. */
export const DEFAULT_LOCAL_SIGNING_ALGORITHM: TokenSigningAlgorithm = 'ES256';

/** The algorithm a private key signs with, or why it cannot sign tokens. */
const algorithmOf = (key: KeyObject): TokenSigningAlgorithm | { problem: string } => {
  if (key.asymmetricKeyType === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < SIGNING_KEY_BITS)
      return { problem: `its RSA key has ${bits} bits, fewer than ${SIGNING_KEY_BITS}` };
    return 'RS256';
  }
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return curve === 'prime256v1' ? 'ES256' : { problem: `its EC key is on ${curve}, not P-256` };
  }
  return { problem: `it holds a ${key.asymmetricKeyType} key, not RSA or EC P-256` };
};

/** The algorithm a key file signs with (RS256 or ES256). */
export const localKeyAlgorithm = (pem: string): TokenSigningAlgorithm => {
  const algorithm = algorithmOf(createPrivateKey(pem));
  if (typeof algorithm !== 'string')
    throw new Error(`The token signing key cannot sign: ${algorithm.problem}`);
  return algorithm;
};

/** Why a key file cannot sign tokens, or undefined when it can. */
const signingKeyProblem = (pem: string): string | undefined => {
  if (pem.trim() === '') return 'it is empty';
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    return 'it is not a PEM private key';
  }
  const algorithm = algorithmOf(key);
  return typeof algorithm === 'string' ? undefined : algorithm.problem;
};

/**
 * Checks an existing key file can sign: throws saying what is wrong with it otherwise. A bad file
 * is never replaced here: a new key would void every token issued with the old one.
 */
export const checkLocalSigningKey = (path: string): void => {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`it cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const problem = signingKeyProblem(pem);
  if (problem !== undefined) throw new Error(problem);
};

/**
 * The local runtime's signer: an RSA or EC P-256 key in a PKCS#8 PEM file under DATA_DIR, created once,
 * so tokens stay valid across restarts just as they do across Lambda containers. An existing
 * file is checked, never overwritten.
 */
export const ensureLocalSigningKey = (
  path: string,
  algorithm: TokenSigningAlgorithm = DEFAULT_LOCAL_SIGNING_ALGORITHM,
): void => {
  if (existsSync(path)) {
    checkLocalSigningKey(path);
    return;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    // 'wx': when two processes race, the first key written wins and neither is overwritten.
    writeFileSync(path, newSigningKeyPem(algorithm), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    checkLocalSigningKey(path);
  }
};

/** Makes a new signing key in PKCS#8 PEM: RSA for RS256, EC P-256 for ES256. */
export const newSigningKeyPem = (
  algorithm: TokenSigningAlgorithm = DEFAULT_LOCAL_SIGNING_ALGORITHM,
): string =>
  (algorithm === 'ES256'
    ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : generateKeyPairSync('rsa', { modulusLength: SIGNING_KEY_BITS })
  ).privateKey
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();

/** A key that signs, and is its own key set: tests and single-key uses. */
export const privateKeySigner = (privateKey: KeyObject): TokenSigner & TokenKeys => {
  const algorithm = algorithmOf(privateKey);
  if (typeof algorithm !== 'string') {
    throw new Error(
      `The token signing key must be an RSA private key of at least ${SIGNING_KEY_BITS} bits or an EC P-256 one: ${algorithm.problem}`,
    );
  }
  const jwk = signingJwk(createPublicKey(privateKey));
  const signer: TokenSigner & TokenKeys = {
    keyId: async () => jwk.kid,
    algorithm: async () => algorithm,
    // RSA: node signs RSASSA-PKCS1-v1_5 (RS256). EC: r||s as JWS wants it, not DER (RFC 7518 3.4).
    sign: async (signingInput) =>
      sign(
        'sha256',
        signingInput,
        algorithm === 'ES256' ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey,
      ),
    publicJwks: async () => ({ keys: [jwk] }),
    signingKey: async () => signer,
  };
  return signer;
};

/** How often the key files are looked at for a rotation or retirement made while the service runs. */
export const LOCAL_KEY_RELOAD_MILLISECONDS = 1000;

interface LoadedKeys {
  /** mtime, inode and size of each file ('' when absent): a change makes the files read again. */
  fingerprint: string;
  signing: TokenSigner & TokenKeys;
  jwks: JsonWebKeySet;
}

const fingerprintOf = async (path: string): Promise<string> => {
  try {
    const { mtimeMs, ino, size } = await stat(path);
    return `${mtimeMs}:${ino}:${size}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
};

const readKey = async (path: string, optional: boolean): Promise<(TokenSigner & TokenKeys) | undefined> => {
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (optional && code === 'ENOENT') return undefined;
    throw new Error(`Cannot read the token signing key ${path}: ${code ?? String(error)}`);
  }
  return privateKeySigner(createPrivateKey(pem));
};

/**
 * The local runtime's keys: the current key file (LOCAL_SIGNING_KEY_FILE) signs, and the previous
 * one beside it (LOCAL_PREVIOUS_SIGNING_KEY_FILE), while it exists, still verifies. The files are
 * looked at again at most once a second, so `npm run keys -- rotate` or `retire` takes effect in
 * a running service too, and the key set and the signer always read the same files.
 */
export const localKeyFiles = (paths: { current: string; previous?: string }): TokenKeys => {
  let loaded: Promise<LoadedKeys> | undefined;
  let checkedAt = 0;
  const load = async (known: LoadedKeys | undefined): Promise<LoadedKeys> => {
    const fingerprint = (
      await Promise.all([paths.current, paths.previous].map((path) => (path ? fingerprintOf(path) : '')))
    ).join('|');
    if (known !== undefined && known.fingerprint === fingerprint) return known;
    const [signing, previous] = await Promise.all([
      readKey(paths.current, false),
      paths.previous ? readKey(paths.previous, true) : undefined,
    ]);
    const current = signing as TokenSigner & TokenKeys;
    const keys = [...(await current.publicJwks()).keys];
    for (const key of previous ? (await previous.publicJwks()).keys : []) {
      if (!keys.some((known) => known.kid === key.kid)) keys.push(key);
    }
    return { fingerprint, signing: current, jwks: { keys } };
  };
  const keys = (): Promise<LoadedKeys> => {
    if (loaded === undefined || Date.now() - checkedAt >= LOCAL_KEY_RELOAD_MILLISECONDS) {
      checkedAt = Date.now();
      const previous = loaded;
      loaded = (previous ?? Promise.resolve(undefined))
        .catch(() => undefined)
        .then(load)
        .catch((error: unknown) => {
          // A failed read is not kept: the next call reads again.
          loaded = undefined;
          throw error;
        });
    }
    return loaded;
  };
  // The files stand in for the KMS signing key: each use is checked as the KMS call it would be.
  const getPublicKey = () => checkStandInCall({ action: 'kms:GetPublicKey', resource: 'SIGNING_KEY_IDS' });
  return {
    signingKey: async () => {
      const signing = (await keys()).signing;
      const signer: TokenSigner = {
        publicJwks: async () => {
          await getPublicKey();
          return signing.publicJwks();
        },
        keyId: async () => {
          await getPublicKey();
          return signing.keyId();
        },
        algorithm: () => signing.algorithm(),
        sign: async (signingInput) => {
          const algorithm = await signing.algorithm();
          await checkStandInCall({
            action: 'kms:Sign',
            resource: 'SIGNING_KEY_IDS',
            context: {
              'kms:SigningAlgorithm': algorithm === 'ES256' ? 'ECDSA_SHA_256' : 'RSASSA_PKCS1_V1_5_SHA_256',
              'kms:MessageType': 'DIGEST',
            },
          });
          return signing.sign(signingInput);
        },
      };
      return signer;
    },
    publicJwks: async () => {
      await getPublicKey();
      return (await keys()).jwks;
    },
  };
};
