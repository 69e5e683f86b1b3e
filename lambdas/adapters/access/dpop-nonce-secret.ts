import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { optionalEnv } from '#shared/config';
import { secretsManagerClient } from '../aws/secrets-manager-client.ts';

/** The least length of the secret DPoP nonces are made with. */
export const DPOP_NONCE_SECRET_MIN_LENGTH = 32;

let cached: { arn: string; secret: Promise<string> } | undefined;

const checked = (secret: string | undefined, name: string): string => {
  if (secret === undefined || secret.length < DPOP_NONCE_SECRET_MIN_LENGTH) {
    throw new Error(`${name} must be at least ${DPOP_NONCE_SECRET_MIN_LENGTH} characters`);
  }
  return secret;
};

/**
 * The secret DPoP server nonces are made with, when nonces are on (RFC 9449 8): DPOP_NONCE_SECRET
 * locally, or the Secrets Manager secret DPOP_NONCE_SECRET_ARN on AWS (`-c dpopNonces=true`),
 * read once per container. Undefined when nonces are off.
 */
export const dpopNonceSecretFromEnvironment = async (): Promise<string | undefined> => {
  const local = optionalEnv('DPOP_NONCE_SECRET');
  if (local !== undefined) return checked(local, 'DPOP_NONCE_SECRET');
  const arn = optionalEnv('DPOP_NONCE_SECRET_ARN');
  if (arn === undefined) return undefined;
  if (cached?.arn !== arn) {
    const secret = secretsManagerClient()
      .send(new GetSecretValueCommand({ SecretId: arn }))
      .then(({ SecretString }) => checked(SecretString, 'The DPoP nonce secret'));
    // A failed read is not kept: the next invocation asks again.
    secret.catch(() => {
      if (cached?.secret === secret) cached = undefined;
    });
    cached = { arn, secret };
  }
  return cached.secret;
};
