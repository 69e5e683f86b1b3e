import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AwsJsonCall } from '#adapters/aws-json';
import { ensureLocalCursorSecret, kmsDerivedCursorKey, secretCursorKey } from '#adapters/cursor-key';

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A KMS that answers GenerateMac with a MAC of the message, failing the first `failures` calls. */
const fakeKms = (failures = 0) => {
  const calls: { operation: string; input: Readonly<Record<string, unknown>> }[] = [];
  // KMS's JSON protocol: binary fields travel in base64.
  const kms = (async (operation: string, input: Readonly<Record<string, unknown>>) => {
    calls.push({ operation, input });
    if (calls.length <= failures) throw new Error('throttled');
    const firstByte = Buffer.from(String(input.Message), 'base64')[0] ?? 0;
    return { Mac: Buffer.alloc(32, firstByte).toString('base64') };
  }) as AwsJsonCall;
  return { kms, calls };
};

describe('cursor key', () => {
  it('derives the key on AWS with one GenerateMac per container, of a fixed label', async () => {
    const { kms, calls } = fakeKms();
    const key = kmsDerivedCursorKey('alias/cursor', kms);
    const [first, second] = [await key(), await key()];
    expect(first).toEqual(second);
    expect(first).toHaveLength(32);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.operation).toBe('GenerateMac');
    expect(calls[0]?.input).toMatchObject({ KeyId: 'alias/cursor', MacAlgorithm: 'HMAC_SHA_256' });
    expect(Buffer.from(String(calls[0]?.input.Message), 'base64').toString()).toMatch(/cursor/);
  });

  it('does not keep a failed derivation: the next request tries KMS again', async () => {
    const { kms, calls } = fakeKms(1);
    const key = kmsDerivedCursorKey('alias/cursor', kms);
    await expect(key()).rejects.toThrow('throttled');
    await expect(key()).resolves.toHaveLength(32);
    expect(calls).toHaveLength(2);
  });

  it('keeps the local secret in one private file, created once', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cursor-key-'));
    folders.push(folder);
    const path = join(folder, 'data', 'list-cursor-secret');
    const secret = ensureLocalCursorSecret(path);
    expect(ensureLocalCursorSecret(path)).toBe(secret);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await expect(secretCursorKey(secret)()).resolves.toHaveLength(32);
  });

  it('refuses a local secret too short to sign with', () => {
    expect(() => secretCursorKey('c2hvcnQ')).toThrow(/at least 32 bytes/);
  });
});
