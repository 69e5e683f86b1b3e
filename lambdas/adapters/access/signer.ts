import type { TokenKeys } from '#domain/access/ports';
import { optionalEnv } from '#shared/config';
import { documentClient, tableName } from '../aws/dynamodb-client.ts';
import { kmsSigner } from './signer-kms.ts';
import { localKeyFiles } from './signer-local.ts';
import { DynamoDbSigningKeyScheduleStore } from './signing-key-schedule.ts';
import { scheduledKeys } from './signing-keys-kms.ts';

let keys: { source: string; keys: TokenKeys } | undefined;

/**
 * On AWS (SIGNING_KEY_IDS: the stack's KMS keys, oldest first) the keys follow the schedule in
 * the table; locally (LOCAL_SIGNING_KEY_FILE, and LOCAL_PREVIOUS_SIGNING_KEY_FILE beside it) the
 * key files. One instance per source, so public keys are read once per container or process.
 */
export const tokenKeysFromEnvironment = (): TokenKeys => {
  const heldKeyIds = optionalEnv('SIGNING_KEY_IDS');
  const keyFile = optionalEnv('LOCAL_SIGNING_KEY_FILE');
  const previousKeyFile = optionalEnv('LOCAL_PREVIOUS_SIGNING_KEY_FILE');
  const source = heldKeyIds
    ? `kms:${heldKeyIds}`
    : keyFile
      ? `file:${keyFile}:${previousKeyFile ?? ''}`
      : undefined;
  if (source === undefined) {
    throw new Error(
      'No token signing key: set SIGNING_KEY_IDS (on AWS) or LOCAL_SIGNING_KEY_FILE (local runtime)',
    );
  }
  if (keys?.source !== source) {
    keys = {
      source,
      keys: heldKeyIds
        ? scheduledKeys({
            schedule: new DynamoDbSigningKeyScheduleStore(documentClient(), tableName()),
            heldKeyIds: heldKeyIds.split(',').map((keyId) => keyId.trim()),
            signerFor: (keyId) => kmsSigner(keyId),
          })
        : localKeyFiles({
            current: keyFile as string,
            ...(previousKeyFile !== undefined && { previous: previousKeyFile }),
          }),
    };
  }
  return keys.keys;
};
