import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type DataKeys,
  EnvelopeSecrets,
  encryptionContextOf,
  LocalDataKeys,
  SealedSecretError,
} from '#adapters/webhooks/secret-envelope';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const context = { tenant: 't1', endpointId: '0190a6f0-0000-7000-8000-000000000001' };
const localKeys = () => new LocalDataKeys(randomBytes(32).toString('base64url'));

/** Counts the data key calls, as KMS would bill them. */
class CountingKeys implements DataKeys {
  generated = 0;
  unwrapped = 0;
  constructor(private readonly keys: DataKeys) {}
  generate(c: typeof context) {
    this.generated++;
    return this.keys.generate(c);
  }
  unwrap(wrapped: Uint8Array, c: typeof context) {
    this.unwrapped++;
    return this.keys.unwrap(wrapped, c);
  }
}

describe('webhook secrets sealed by envelope encryption', () => {
  it('keeps no trace of the secret in what is stored, and opens it again for its endpoint', async () => {
    const secrets = new EnvelopeSecrets(localKeys());
    const sealed = await secrets.seal(SECRET, context);
    expect(sealed).toMatch(/^v1(\.[A-Za-z0-9_-]+){4}$/);
    expect(sealed).not.toContain(SECRET.slice(6, 20));
    expect(Buffer.from(sealed.split('.')[3] ?? '', 'base64url').toString()).not.toContain('whsec_');
    expect(await secrets.open(sealed, context)).toBe(SECRET);
    // A data key per secret: the same secret sealed twice looks different.
    expect(await secrets.seal(SECRET, context)).not.toBe(sealed);
  });

  it('refuses to open a secret for another endpoint or tenant, or one changed, or under another key', async () => {
    const keys = localKeys();
    const sealed = await new EnvelopeSecrets(keys).seal(SECRET, context);
    const opener = () => new EnvelopeSecrets(keys);
    await expect(opener().open(sealed, { ...context, endpointId: 'other' })).rejects.toThrow(
      SealedSecretError,
    );
    await expect(opener().open(sealed, { ...context, tenant: 't2' })).rejects.toThrow(SealedSecretError);
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[3] ?? '', 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    parts[3] = flipped.toString('base64url');
    await expect(opener().open(parts.join('.'), context)).rejects.toThrow(SealedSecretError);
    await expect(new EnvelopeSecrets(localKeys()).open(sealed, context)).rejects.toThrow(SealedSecretError);
    await expect(opener().open('whsec_plain', context)).rejects.toThrow(SealedSecretError);
  });

  it('asks for one data key per seal and opens each sealed secret once per container', async () => {
    const keys = new CountingKeys(localKeys());
    const secrets = new EnvelopeSecrets(keys);
    const sealed = await secrets.seal(SECRET, context);
    for (let attempt = 0; attempt < 5; attempt++) expect(await secrets.open(sealed, context)).toBe(SECRET);
    expect([keys.generated, keys.unwrapped]).toEqual([1, 1]);
  });

  it('names the tenant and the endpoint in the KMS encryption context', () => {
    expect(encryptionContextOf(context)).toEqual({
      purpose: 'webhook-signing-secret',
      tenant: 't1',
      webhookEndpoint: context.endpointId,
    });
  });
});
