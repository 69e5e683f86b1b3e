import { createHash, createPublicKey } from 'node:crypto';
import { GetPublicKeyCommand, type KMSClient, SignCommand } from '@aws-sdk/client-kms';
import type { TokenSigner } from '#domain/access/ports';
import { type RsaSigningJwk, rsaSigningJwk } from '#domain/access/token-signer';
import { kmsClient } from '../aws/kms-client.ts';

const SIGNING_ALGORITHM = 'RSASSA_PKCS1_V1_5_SHA_256';

/** The part of the KMS client the signer uses (a test hands in its own). */
export type KmsSend = Pick<KMSClient, 'send'>;

/**
 * Signs with an asymmetric KMS key (RSA, SIGN_VERIFY): the private key never leaves KMS.
 * The public key is read once per container; KMS_KEY_ID may be a key id, ARN or alias.
 */
export const kmsSigner = (keyId: string, kms: KmsSend = kmsClient()): TokenSigner => {
  let publicKey: Promise<RsaSigningJwk> | undefined;
  const signingJwk = (): Promise<RsaSigningJwk> => {
    publicKey ??= kms.send(new GetPublicKeyCommand({ KeyId: keyId })).then(
      (key) => {
        if (
          !key.KeySpec?.startsWith('RSA_') ||
          key.KeyUsage !== 'SIGN_VERIFY' ||
          !key.SigningAlgorithms?.includes(SIGNING_ALGORITHM) ||
          key.PublicKey === undefined
        ) {
          throw new Error(`KMS key ${keyId} is not an RSA SIGN_VERIFY key that signs ${SIGNING_ALGORITHM}`);
        }
        return rsaSigningJwk(
          createPublicKey({ key: Buffer.from(key.PublicKey), format: 'der', type: 'spki' }),
        );
      },
      (error: unknown) => {
        // A failed read is not cached: the next invocation tries again.
        publicKey = undefined;
        throw error;
      },
    );
    return publicKey;
  };

  return {
    keyId: async () => (await signingJwk()).kid,
    sign: async (signingInput) => {
      // DIGEST: only the SHA-256 hash goes to KMS, whatever the token's length.
      const { Signature } = await kms.send(
        new SignCommand({
          KeyId: keyId,
          Message: createHash('sha256').update(signingInput).digest(),
          MessageType: 'DIGEST',
          SigningAlgorithm: SIGNING_ALGORITHM,
        }),
      );
      if (Signature === undefined) throw new Error(`KMS returned no signature for key ${keyId}`);
      return Buffer.from(Signature);
    },
    publicJwks: async () => ({ keys: [await signingJwk()] }),
  };
};
