import { describe, expect, it } from 'vitest';
import { hashClientSecret, NO_CLIENT_SECRET_HASH, verifyClientSecret } from '#domain/access/client-secret';

const SECRET = 'correct-horse-battery-staple';

describe('client secrets', () => {
  it('are stored as scrypt parameters, a 16-byte salt and the hash', async () => {
    const hash = await hashClientSecret(SECRET);
    const [scheme, N, r, p, salt, derived] = hash.split('$');

    expect([scheme, N, r, p]).toEqual(['scrypt', '16384', '8', '1']);
    expect(Buffer.from(salt ?? '', 'base64url')).toHaveLength(16);
    expect(Buffer.from(derived ?? '', 'base64url')).toHaveLength(32);
    expect(hash).not.toContain(SECRET);
  });

  it('get a new salt every time', async () => {
    expect(await hashClientSecret(SECRET)).not.toBe(await hashClientSecret(SECRET));
  });

  it('verify the secret they were made from, and no other', async () => {
    const hash = await hashClientSecret(SECRET);

    expect(await verifyClientSecret(SECRET, hash)).toBe(true);
    expect(await verifyClientSecret(`${SECRET} `, hash)).toBe(false);
    expect(await verifyClientSecret('', hash)).toBe(false);
  });

  it('verify nothing against the unknown-client hash', async () => {
    expect(await verifyClientSecret('', NO_CLIENT_SECRET_HASH)).toBe(false);
    expect(await verifyClientSecret(SECRET, NO_CLIENT_SECRET_HASH)).toBe(false);
  });

  it('verify nothing against a malformed or truncated hash', async () => {
    const [scheme, N, r, p, salt] = (await hashClientSecret(SECRET)).split('$');

    expect(await verifyClientSecret(SECRET, `${scheme}$${N}$${r}$${p}$${salt}$`)).toBe(false);
    expect(await verifyClientSecret(SECRET, `${scheme}$${N}$${r}$${p}$${salt}$AA`)).toBe(false);
    expect(await verifyClientSecret(SECRET, 'plain-text-secret')).toBe(false);
    expect(await verifyClientSecret(SECRET, `scrypt$${2 ** 30}$8$1$${salt}$${salt}${salt}`)).toBe(false);
  });
});
