import { optionalEnv } from '#shared/config';
import { kmsClient } from '../aws/kms-client.ts';
import { EnvelopeSecrets, KmsDataKeys, LocalDataKeys } from './secret-envelope.ts';

let shared: EnvelopeSecrets | undefined;

/**
 * The webhook signing secrets' envelope: WEBHOOK_SECRET_KEY_ID (a KMS key, on AWS) or
 * LOCAL_WEBHOOK_SECRET_KEY (the local runtime's key). Only the functions that seal (create,
 * rotate) or open (sign deliveries) are given either, and only they import this module.
 */
export const webhookSecrets = (): EnvelopeSecrets => {
  if (shared) return shared;
  const keyId = optionalEnv('WEBHOOK_SECRET_KEY_ID');
  const localKey = optionalEnv('LOCAL_WEBHOOK_SECRET_KEY');
  if (keyId !== undefined) shared = new EnvelopeSecrets(new KmsDataKeys(keyId, kmsClient()));
  else if (localKey !== undefined) shared = new EnvelopeSecrets(new LocalDataKeys(localKey));
  else
    throw new Error(
      'No webhook secret key: set WEBHOOK_SECRET_KEY_ID (on AWS) or LOCAL_WEBHOOK_SECRET_KEY (local runtime)',
    );
  return shared;
};
