import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TokenSigner } from '#domain/ports';
import { rsaSigningJwk } from '#domain/token-signer';

/**
 * The local runtime's signer: an RSA key in a PKCS#8 PEM file under DATA_DIR, created once,
 * so tokens stay valid across restarts just as they do across Lambda containers.
 */
export const ensureLocalSigningKey = (path: string): void => {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  try {
    // 'wx': when two processes race, the first key written wins and neither is overwritten.
    writeFileSync(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
};

export const privateKeySigner = (privateKey: KeyObject): TokenSigner => {
  if (
    privateKey.asymmetricKeyType !== 'rsa' ||
    (privateKey.asymmetricKeyDetails?.modulusLength ?? 0) < 2048
  ) {
    throw new Error('The token signing key must be an RSA private key of at least 2048 bits');
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
