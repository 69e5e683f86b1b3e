import { describe, expect, it } from 'vitest';
import { verifyClientSecret } from '#domain/access/client-secret';
import { InvalidClientRegistrationError, registerClient } from '#domain/access/register-client';
import { CLIENT, InMemoryClientStore } from './fakes.ts';

describe('registerClient', () => {
  it('stores the client with a hash of its secret, never the secret', async () => {
    const store = new InMemoryClientStore();

    await registerClient(store, CLIENT, new Date('2030-01-02T03:04:05.000Z'));

    const stored = store.clients.get(CLIENT.clientId);
    expect(stored).toEqual({
      clientId: CLIENT.clientId,
      secretHash: expect.stringMatching(/^scrypt\$/),
      scopes: CLIENT.scopes,
      tenant: CLIENT.tenant,
      createdAt: '2030-01-02T03:04:05.000Z',
    });
    expect(JSON.stringify(stored)).not.toContain(CLIENT.secret);
    expect(await verifyClientSecret(CLIENT.secret, stored?.secretHash ?? '')).toBe(true);
  });

  it('replaces a client with the same id, so a secret can be rotated', async () => {
    const store = new InMemoryClientStore();
    await registerClient(store, CLIENT);

    await registerClient(store, {
      ...CLIENT,
      secret: 'the-next-secret-value',
      scopes: ['transactions:read'],
    });

    const stored = store.clients.get(CLIENT.clientId);
    expect(stored?.scopes).toEqual(['transactions:read']);
    expect(await verifyClientSecret(CLIENT.secret, stored?.secretHash ?? '')).toBe(false);
  });

  it('drops repeated scopes', async () => {
    const store = new InMemoryClientStore();

    const client = await registerClient(store, { ...CLIENT, scopes: ['cards:read', 'cards:read'] });

    expect(client.scopes).toEqual(['cards:read']);
  });

  it.each([
    ['a client id with a space', { clientId: 'acme payments' }, /client id/],
    ['a client id with #', { clientId: 'acme#1' }, /client id/],
    ['a secret under 16 characters', { secret: 'short-secret' }, /secret must be 16 to 256/],
    ['a tenant with #', { tenant: 'acme#CT' }, /tenant/],
    [
      'an unknown scope',
      { scopes: ['transactions:read', 'payments:all'] },
      /unknown scope\(s\): payments:all/,
    ],
    ['no scope', { scopes: [] }, /at least one scope/],
  ])('refuses %s', async (_, change, message) => {
    const store = new InMemoryClientStore();

    const registering = registerClient(store, { ...CLIENT, ...change });

    await expect(registering).rejects.toBeInstanceOf(InvalidClientRegistrationError);
    await expect(registering).rejects.toThrow(message);
    expect(store.clients.size).toBe(0);
  });
});
