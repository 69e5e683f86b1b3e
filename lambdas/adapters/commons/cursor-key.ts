import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GenerateMacCommand, type KMSClient } from '@aws-sdk/client-kms';
import { optionalEnv } from '#shared/config';
import { kmsClient } from '../aws/kms-client.ts';
import { checkStandInCall } from '../aws/stand-ins.ts';

/**
 * The secret that signs list cursors. On AWS it is derived from a KMS HMAC key: one GenerateMac
 * of a fixed label per container gives every container the same 32 bytes, while the root key never
 * leaves KMS and no secret sits in configuration. Locally it is random bytes in a file under
 * DATA_DIR, handed to the handlers in LIST_CURSOR_SECRET (base64url).
 */
const DERIVATION_LABEL = 'credit-transfers/list-cursor-key/v1';
const SECRET_BYTES = 32;

/** What the local file holds: SECRET_BYTES random bytes in base64url, no padding (43 characters). */
const LOCAL_SECRET_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/**
 * Creates the local secret file once (a race keeps the first one written) and returns its value.
 * An existing file is checked, never replaced: a new secret would void every cursor handed out.
 * Throws saying what is wrong with a file that cannot be used.
 */
export const ensureLocalCursorSecret = (path: string): string => {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, randomBytes(SECRET_BYTES).toString('base64url'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  let secret: string;
  try {
    secret = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new Error(`it cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (secret === '') throw new Error('it is empty');
  if (!LOCAL_SECRET_FORMAT.test(secret))
    throw new Error(`it does not hold ${SECRET_BYTES} bytes in base64url (43 characters)`);
  return secret;
};

export const kmsDerivedCursorKey = (
  keyId: string,
  kms: Pick<KMSClient, 'send'>,
): (() => Promise<Uint8Array>) => {
  let derived: Promise<Uint8Array> | undefined;
  return () => {
    derived ??= kms
      .send(
        new GenerateMacCommand({
          KeyId: keyId,
          MacAlgorithm: 'HMAC_SHA_256',
          Message: Buffer.from(DERIVATION_LABEL),
        }),
      )
      .then(
        ({ Mac }) => {
          if (Mac === undefined || Mac.length < SECRET_BYTES)
            throw new Error(`KMS key ${keyId} returned no usable MAC`);
          return Mac;
        },
        (error: unknown) => {
          // A failed read is not kept: the next request tries again.
          derived = undefined;
          throw error;
        },
      );
    return derived;
  };
};

export const secretCursorKey = (secret: string): (() => Promise<Uint8Array>) => {
  const key = Buffer.from(secret, 'base64url');
  if (key.length < SECRET_BYTES)
    throw new Error(`LIST_CURSOR_SECRET must encode at least ${SECRET_BYTES} bytes`);
  // The key stands in for the KMS HMAC key: each use is checked as the GenerateMac that derives it.
  return async () => {
    await checkStandInCall({
      action: 'kms:GenerateMac',
      resource: 'LIST_CURSOR_KEY_ID',
      context: { 'kms:MacAlgorithm': 'HMAC_SHA_256' },
    });
    return key;
  };
};

let shared: (() => Promise<Uint8Array>) | undefined;

/** LIST_CURSOR_KEY_ID (a KMS HMAC_256 key, on AWS) or LIST_CURSOR_SECRET (local runtime). */
export const cursorKeyFromEnvironment = (): (() => Promise<Uint8Array>) => {
  if (shared) return shared;
  const keyId = optionalEnv('LIST_CURSOR_KEY_ID');
  const secret = optionalEnv('LIST_CURSOR_SECRET');
  if (keyId !== undefined) shared = kmsDerivedCursorKey(keyId, kmsClient());
  else if (secret !== undefined) shared = secretCursorKey(secret);
  else
    throw new Error('No cursor key: set LIST_CURSOR_KEY_ID (on AWS) or LIST_CURSOR_SECRET (local runtime)');
  return shared;
};
