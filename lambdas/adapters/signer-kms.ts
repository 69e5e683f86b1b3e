import { createHash, createPublicKey } from 'node:crypto';
import type { TokenSigner } from '#domain/ports';
import { type RsaSigningJwk, rsaSigningJwk } from '#domain/token-signer';
import { type AwsJsonCall, awsJsonClient, KMS } from './aws-json.ts';

const SIGNING_ALGORITHM = 'RSASSA_PKCS1_V1_5_SHA_256';

/** What KMS answers to GetPublicKey, as the JSON protocol gives it (binary fields in base64). */
interface PublicKeyAnswer {
  KeySpec?: string;
  KeyUsage?: string;
  SigningAlgorithms?: string[];
  PublicKey?: string;
}

let sharedClient: AwsJsonCall | undefined;
const sharedKmsClient = (): AwsJsonCall => {
  sharedClient ??= awsJsonClient(KMS);
  return sharedClient;
};

/**
 * Signs with an asymmetric KMS key (RSA, SIGN_VERIFY): the private key never leaves KMS.
 * The public key is read once per container; KMS_KEY_ID may be a key id, ARN or alias.
 */
export const kmsSigner = (keyId: string, kms: AwsJsonCall = sharedKmsClient()): TokenSigner => {
  let publicKey: Promise<RsaSigningJwk> | undefined;
  const signingJwk = (): Promise<RsaSigningJwk> => {
    publicKey ??= kms<PublicKeyAnswer>('GetPublicKey', { KeyId: keyId }).then(
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
          createPublicKey({ key: Buffer.from(key.PublicKey, 'base64'), format: 'der', type: 'spki' }),
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
      const { Signature } = await kms<{ Signature?: string }>('Sign', {
        KeyId: keyId,
        Message: createHash('sha256').update(signingInput).digest('base64'),
        MessageType: 'DIGEST',
        SigningAlgorithm: SIGNING_ALGORITHM,
      });
      if (Signature === undefined) throw new Error(`KMS returned no signature for key ${keyId}`);
      return Buffer.from(Signature, 'base64');
    },
    publicJwks: async () => ({ keys: [await signingJwk()] }),
  };
};
