import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { SecretContext, SecretOpener, SecretSealer } from '#domain/webhooks/webhook-endpoint';
import { checkStandInCall } from '../aws/stand-ins.ts';

/**
 * Webhook signing secrets sealed by envelope encryption: each secret under a data key of its own
 * (AES-256-GCM, node:crypto), the data key wrapped by a KMS key (GenerateDataKey, Decrypt) with an
 * encryption context naming the tenant and the endpoint, so a sealed secret opens for that
 * endpoint only, and only for a role the key policy lets decrypt with that context. Locally the
 * data key is wrapped by the local key (32 bytes under DATA_DIR) the same way.
 *
 * Sealed: `v1.<wrapped data key>.<iv>.<ciphertext>.<tag>`, each base64url.
 */
const VERSION = 'v1';
const IV_BYTES = 12;
const KEY_BYTES = 32;
/** The encryption context's fixed entry: grants name it, so the key wraps nothing else for them. */
export const SECRET_PURPOSE = 'webhook-signing-secret';

/** The KMS encryption context of an endpoint's secrets; the grants' `kms:EncryptionContext:*` conditions name its keys. */
export const encryptionContextOf = (context: SecretContext): Record<string, string> => ({
  purpose: SECRET_PURPOSE,
  tenant: context.tenant,
  webhookEndpoint: context.endpointId,
});

/** The condition keys KMS sets for a call with the endpoint's encryption context. */
const kmsConditionKeys = (context: SecretContext): Record<string, string | string[]> => {
  const encryptionContext = encryptionContextOf(context);
  return {
    ...Object.fromEntries(
      Object.entries(encryptionContext).map(([key, value]) => [`kms:EncryptionContext:${key}`, value]),
    ),
    'kms:EncryptionContextKeys': Object.keys(encryptionContext),
  };
};

/** The same context as additional authenticated data of the secret itself. */
const aadOf = (context: SecretContext): Buffer =>
  Buffer.from(JSON.stringify(Object.entries(encryptionContextOf(context))));

/** Makes and unwraps data keys: KMS on AWS, the local key in the local runtime. */
export interface DataKeys {
  generate(context: SecretContext): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }>;
  unwrap(wrapped: Uint8Array, context: SecretContext): Promise<Uint8Array>;
}

const gcmSeal = (key: Uint8Array, plaintext: Uint8Array, aad: Buffer) => {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
};

const gcmOpen = (key: Uint8Array, iv: Buffer, ciphertext: Buffer, tag: Buffer, aad: Buffer): Buffer => {
  const decipher = createDecipheriv('aes-256-gcm', key, iv).setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
};

export class SealedSecretError extends Error {
  constructor(reason: string) {
    super(`A sealed webhook secret cannot be opened: ${reason}`);
    this.name = 'SealedSecretError';
  }
}

/** Opened secrets kept per container: a sealed value never changes, and each open is a KMS call. */
const OPENED_CACHE_SIZE = 1000;

export class EnvelopeSecrets implements SecretSealer, SecretOpener {
  private readonly opened = new Map<string, Promise<string>>();

  constructor(private readonly keys: DataKeys) {}

  async seal(secret: string, context: SecretContext): Promise<string> {
    const { plaintext, wrapped } = await this.keys.generate(context);
    const { iv, ciphertext, tag } = gcmSeal(plaintext, Buffer.from(secret, 'utf8'), aadOf(context));
    return [VERSION, Buffer.from(wrapped), iv, ciphertext, tag]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  open(sealed: string, context: SecretContext): Promise<string> {
    const cacheKey = `${context.tenant}\u0000${context.endpointId}\u0000${sealed}`;
    let opening = this.opened.get(cacheKey);
    if (opening === undefined) {
      opening = this.openNow(sealed, context);
      if (this.opened.size >= OPENED_CACHE_SIZE) this.opened.clear();
      this.opened.set(cacheKey, opening);
      // A failed open is not kept: the next attempt tries again.
      opening.catch(() => this.opened.delete(cacheKey));
    }
    return opening;
  }

  private async openNow(sealed: string, context: SecretContext): Promise<string> {
    const [version, wrapped, iv, ciphertext, tag, ...rest] = sealed.split('.');
    if (version !== VERSION || !wrapped || !iv || !ciphertext || !tag || rest.length > 0) {
      throw new SealedSecretError('not a sealed secret of this service');
    }
    const key = await this.keys.unwrap(Buffer.from(wrapped, 'base64url'), context);
    try {
      return gcmOpen(
        key,
        Buffer.from(iv, 'base64url'),
        Buffer.from(ciphertext, 'base64url'),
        Buffer.from(tag, 'base64url'),
        aadOf(context),
      ).toString('utf8');
    } catch {
      throw new SealedSecretError('it was sealed for another endpoint, or changed');
    }
  }
}

/** Data keys from a KMS symmetric key, with the endpoint's encryption context. */
export class KmsDataKeys implements DataKeys {
  constructor(
    private readonly keyId: string,
    private readonly kms: Pick<KMSClient, 'send'>,
  ) {}

  async generate(context: SecretContext): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }> {
    const { Plaintext, CiphertextBlob } = await this.kms.send(
      new GenerateDataKeyCommand({
        KeyId: this.keyId,
        KeySpec: 'AES_256',
        EncryptionContext: encryptionContextOf(context),
      }),
    );
    if (Plaintext === undefined || CiphertextBlob === undefined)
      throw new Error(`KMS key ${this.keyId} returned no data key`);
    return { plaintext: Plaintext, wrapped: CiphertextBlob };
  }

  async unwrap(wrapped: Uint8Array, context: SecretContext): Promise<Uint8Array> {
    const { Plaintext } = await this.kms.send(
      new DecryptCommand({
        KeyId: this.keyId,
        CiphertextBlob: wrapped,
        EncryptionContext: encryptionContextOf(context),
      }),
    );
    if (Plaintext === undefined) throw new Error(`KMS key ${this.keyId} returned no data key`);
    return Plaintext;
  }
}

/** The local stand-in for the KMS key: data keys wrapped by AES-256-GCM under the local key, bound to the same context. */
export class LocalDataKeys implements DataKeys {
  private readonly key: Buffer;

  constructor(keyBase64url: string) {
    this.key = Buffer.from(keyBase64url, 'base64url');
    if (this.key.length !== KEY_BYTES)
      throw new Error(`LOCAL_WEBHOOK_SECRET_KEY must encode ${KEY_BYTES} bytes`);
  }

  async generate(context: SecretContext): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }> {
    await checkStandInCall({
      action: 'kms:GenerateDataKey',
      resource: 'WEBHOOK_SECRET_KEY_ID',
      context: { ...kmsConditionKeys(context), 'kms:DataKeySpec': 'AES_256' },
    });
    const plaintext = randomBytes(KEY_BYTES);
    const { iv, ciphertext, tag } = gcmSeal(this.key, plaintext, aadOf(context));
    return { plaintext, wrapped: Buffer.concat([iv, tag, ciphertext]) };
  }

  async unwrap(wrapped: Uint8Array, context: SecretContext): Promise<Uint8Array> {
    await checkStandInCall({
      action: 'kms:Decrypt',
      resource: 'WEBHOOK_SECRET_KEY_ID',
      context: kmsConditionKeys(context),
    });
    const bytes = Buffer.from(wrapped);
    try {
      return gcmOpen(
        this.key,
        bytes.subarray(0, IV_BYTES),
        bytes.subarray(IV_BYTES + 16),
        bytes.subarray(IV_BYTES, IV_BYTES + 16),
        aadOf(context),
      );
    } catch {
      throw new SealedSecretError('its data key was wrapped for another endpoint, or by another key');
    }
  }
}
