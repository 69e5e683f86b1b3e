import { createHash, createPublicKey } from 'node:crypto';
import {
  GetPublicKeyCommand,
  type KMSClient,
  SignCommand,
  type SigningAlgorithmSpec,
} from '@aws-sdk/client-kms';
import { derToJose } from 'ecdsa-sig-formatter';
import type { TokenSigner } from '#domain/access/ports';
import { signingJwk as publicSigningJwk, type SigningJwk } from '#domain/access/token-signer';
import { kmsClient } from '../aws/kms-client.ts';

/** The part of the KMS client the signer uses (a test hands in its own). */
export type KmsSend = Pick<KMSClient, 'send'>;

/** What KMS signs with for each JWS algorithm, and the key specs that can. */
const KMS_SIGNING = {
  RS256: { algorithm: 'RSASSA_PKCS1_V1_5_SHA_256', keySpec: (spec: string) => spec.startsWith('RSA_') },
  ES256: { algorithm: 'ECDSA_SHA_256', keySpec: (spec: string) => spec === 'ECC_NIST_P256' },
} as const satisfies Record<
  SigningJwk['alg'],
  { algorithm: SigningAlgorithmSpec; keySpec: (spec: string) => boolean }
>;

/**
 * Signs with an asymmetric KMS key (SIGN_VERIFY): RSA keys sign RS256, ECC_NIST_P256 keys ES256;
 * the private key never leaves KMS. The public key is read once per container; the key id may be
 * a key id, ARN or alias.
 */
export const kmsSigner = (keyId: string, kms: KmsSend = kmsClient()): TokenSigner => {
  let publicKey: Promise<SigningJwk> | undefined;
  const signingJwk = (): Promise<SigningJwk> => {
    publicKey ??= kms.send(new GetPublicKeyCommand({ KeyId: keyId })).then(
      (key) => {
        const usable = Object.values(KMS_SIGNING).some(
          ({ algorithm, keySpec }) =>
            keySpec(key.KeySpec ?? '') && key.SigningAlgorithms?.includes(algorithm) === true,
        );
        if (!usable || key.KeyUsage !== 'SIGN_VERIFY' || key.PublicKey === undefined) {
          throw new Error(
            `KMS key ${keyId} is not an RSA or ECC_NIST_P256 SIGN_VERIFY key that signs RS256 or ES256`,
          );
        }
        return publicSigningJwk(
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
    algorithm: async () => (await signingJwk()).alg,
    sign: async (signingInput) => {
      const { alg } = await signingJwk();
      // DIGEST: only the SHA-256 hash goes to KMS, whatever the token's length.
      const { Signature } = await kms.send(
        new SignCommand({
          KeyId: keyId,
          Message: createHash('sha256').update(signingInput).digest(),
          MessageType: 'DIGEST',
          SigningAlgorithm: KMS_SIGNING[alg].algorithm,
        }),
      );
      if (Signature === undefined) throw new Error(`KMS returned no signature for key ${keyId}`);
      // KMS returns an ECDSA signature DER-encoded; a JWS carries r||s (RFC 7518 3.4).
      return alg === 'ES256'
        ? Buffer.from(derToJose(Buffer.from(Signature), 'ES256'), 'base64url')
        : Buffer.from(Signature);
    },
    publicJwks: async () => ({ keys: [await signingJwk()] }),
  };
};
