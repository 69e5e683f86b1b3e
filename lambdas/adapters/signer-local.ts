import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TokenSigner } from '#domain/ports';
import { rsaSigningJwk } from '#domain/token-signer';

/** The size of the keys this service makes, and the least it signs with. */
export const SIGNING_KEY_BITS = 2048;

/** Why a key file cannot sign tokens, or undefined when it can. */
const signingKeyProblem = (pem: string): string | undefined => {
  if (pem.trim() === '') return 'it is empty';
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    return 'it is not a PEM private key';
  }
  if (key.asymmetricKeyType !== 'rsa') return `it holds a ${key.asymmetricKeyType} key, not RSA`;
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < SIGNING_KEY_BITS) return `its RSA key has ${bits} bits, fewer than ${SIGNING_KEY_BITS}`;
  return undefined;
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
 * The local runtime's signer: an RSA key in a PKCS#8 PEM file under DATA_DIR, created once,
 * so tokens stay valid across restarts just as they do across Lambda containers. An existing
 * file is checked, never overwritten.
 */
export const ensureLocalSigningKey = (path: string): void => {
  if (existsSync(path)) {
    checkLocalSigningKey(path);
    return;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: SIGNING_KEY_BITS });
  try {
    // 'wx': when two processes race, the first key written wins and neither is overwritten.
    writeFileSync(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    checkLocalSigningKey(path);
  }
};

export const privateKeySigner = (privateKey: KeyObject): TokenSigner => {
  if (
    privateKey.asymmetricKeyType !== 'rsa' ||
    (privateKey.asymmetricKeyDetails?.modulusLength ?? 0) < SIGNING_KEY_BITS
  ) {
    throw new Error(`The token signing key must be an RSA private key of at least ${SIGNING_KEY_BITS} bits`);
  }
  const jwk = rsaSigningJwk(createPublicKey(privateKey));
  return {
    keyId: async () => jwk.kid,
    // For RSA keys node signs RSASSA-PKCS1-v1_5, which is what RS256 is.
    sign: async (signingInput) => sign('sha256', signingInput, privateKey),
    publicJwks: async () => ({ keys: [jwk] }),
  };
};

/** Reads the key file on first use; LOCAL_SIGNING_KEY_FILE names it. */
export const localFileSigner = (path: string): TokenSigner => {
  let loaded: Promise<TokenSigner> | undefined;
  const signer = (): Promise<TokenSigner> => {
    loaded ??= readFile(path, 'utf8').then(
      (pem) => privateKeySigner(createPrivateKey(pem)),
      (error: NodeJS.ErrnoException) => {
        loaded = undefined;
        throw new Error(`Cannot read the token signing key ${path}: ${error.code ?? error.message}`);
      },
    );
    return loaded;
  };
  return {
    keyId: async () => (await signer()).keyId(),
    sign: async (signingInput) => (await signer()).sign(signingInput),
    publicJwks: async () => (await signer()).publicJwks(),
  };
};
