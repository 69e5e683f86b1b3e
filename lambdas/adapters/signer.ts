import type { TokenSigner } from '#domain/ports';
import { optionalEnv } from '#shared/config';
import { kmsSigner } from './signer-kms.ts';
import { localFileSigner } from './signer-local.ts';

const signers = new Map<string, TokenSigner>();

/**
 * KMS when KMS_KEY_ID is set (AWS), else the key file LOCAL_SIGNING_KEY_FILE (local runtime).
 * One signer per key source, so its public key is read once per container or process.
 */
export const signerFromEnvironment = (): TokenSigner => {
  const kmsKeyId = optionalEnv('KMS_KEY_ID');
  const keyFile = optionalEnv('LOCAL_SIGNING_KEY_FILE');
  const source = kmsKeyId ? `kms:${kmsKeyId}` : keyFile ? `file:${keyFile}` : undefined;
  if (source === undefined) {
    throw new Error(
      'No token signing key: set KMS_KEY_ID (on AWS) or LOCAL_SIGNING_KEY_FILE (local runtime)',
    );
  }
  let signer = signers.get(source);
  if (signer === undefined) {
    signer = kmsKeyId ? kmsSigner(kmsKeyId) : localFileSigner(keyFile as string);
    signers.set(source, signer);
  }
  return signer;
};
