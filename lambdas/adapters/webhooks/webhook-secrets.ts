import { optionalEnv } from '#shared/config';
import { kmsClient } from '../aws/kms-client.ts';
import { containerScope } from '../aws/stand-ins.ts';
import { EnvelopeSecrets, KmsDataKeys, LocalDataKeys } from './secret-envelope.ts';

/** One per container; locally one per function (containerScope), as each has its own container on AWS. */
const shared = new Map<string, EnvelopeSecrets>();

/**
 * The webhook signing secrets' envelope: WEBHOOK_SECRET_KEY_ID (a KMS key, on AWS) or
 * LOCAL_WEBHOOK_SECRET_KEY (the local runtime's key). Only the functions that seal (create,
 * rotate) or open (sign deliveries) are given either, and only they import this module.
 */
export const webhookSecrets = (): EnvelopeSecrets => {
  const scope = containerScope();
  const known = shared.get(scope);
  if (known) return known;
  const keyId = optionalEnv('WEBHOOK_SECRET_KEY_ID');
  const localKey = optionalEnv('LOCAL_WEBHOOK_SECRET_KEY');
  let made: EnvelopeSecrets;
  if (keyId !== undefined) made = new EnvelopeSecrets(new KmsDataKeys(keyId, kmsClient()));
  else if (localKey !== undefined) made = new EnvelopeSecrets(new LocalDataKeys(localKey));
  else
    throw new Error(
      'No webhook secret key: set WEBHOOK_SECRET_KEY_ID (on AWS) or LOCAL_WEBHOOK_SECRET_KEY (local runtime)',
    );
  shared.set(scope, made);
  return made;
};
