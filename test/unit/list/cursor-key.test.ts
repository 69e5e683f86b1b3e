import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenerateMacCommand } from '@aws-sdk/client-kms';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureLocalCursorSecret, kmsDerivedCursorKey, secretCursorKey } from '#adapters/commons/cursor-key';

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A KMS that answers GenerateMac with a MAC of the message, failing the first `failures` calls. */
const fakeKms = (failures = 0) => {
  const calls: { operation: string; input: GenerateMacCommand['input'] }[] = [];
  const kms = {
    send: async (command: GenerateMacCommand) => {
      if (!(command instanceof GenerateMacCommand)) throw new Error('unexpected command');
      calls.push({ operation: 'GenerateMac', input: command.input });
      if (calls.length <= failures) throw new Error('throttled');
      const firstByte = command.input.Message?.[0] ?? 0;
      return { Mac: new Uint8Array(Buffer.alloc(32, firstByte)), $metadata: {} };
    },
  } as Parameters<typeof kmsDerivedCursorKey>[1];
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
    expect(Buffer.from(calls[0]?.input.Message ?? new Uint8Array()).toString()).toMatch(/cursor/);
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
