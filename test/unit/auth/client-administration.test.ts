import { beforeEach, describe, expect, it } from 'vitest';
import {
  type ClientAdministration,
  ClientExistsError,
  ConcurrentClientChangeError,
  createClient,
  disableClient,
  listClients,
  rotateClientSecret,
  UnknownClientError,
} from '#domain/access/client-administration';
import { issueAccessToken } from '#domain/access/issue-access-token';
import { InvalidClientRegistrationError } from '#domain/access/register-client';
import { InvalidClientError } from '#domain/access/token-errors';
import {
  AUDIENCE,
  CLIENT,
  InMemoryClientStore,
  ISSUER,
  issuerSettings,
  ManualClock,
  RecordingAuditPublisher,
  RecordingThrottle,
  testSigner,
} from './fakes.ts';

let store: InMemoryClientStore;
let audit: RecordingAuditPublisher;
let clock: ManualClock;
let administration: ClientAdministration;

/** The token endpoint's own authentication, on the same store and clock. */
const authenticates = async (clientId: string, secret: string): Promise<boolean> => {
  try {
    await issueAccessToken(
      {
        clients: store,
        keys: testSigner(),
        issuer: ISSUER,
        audience: AUDIENCE,
        throttle: new RecordingThrottle(),
        ...issuerSettings(),
        clock,
      },
      {
        credentials: { clientId, secret, method: 'client_secret_post' },
        scope: undefined,
        dpopProof: undefined,
        sourceAddress: '203.0.113.7',
      },
    );
    return true;
  } catch (error) {
    if (error instanceof InvalidClientError) return false;
    throw error;
  }
};

const REGISTRATION = { clientId: CLIENT.clientId, scopes: CLIENT.scopes, tenant: CLIENT.tenant };

beforeEach(() => {
  store = new InMemoryClientStore();
  audit = new RecordingAuditPublisher();
  clock = new ManualClock();
  administration = { clients: store, audit, clock, actor: 'arn:aws:iam::123456789012:user/operator' };
});

describe('creating a client', () => {
  it('generates a 32-byte secret, stores only its hash and audits the creation without it', async () => {
    const { secret } = await createClient(administration, REGISTRATION);

    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(await authenticates(CLIENT.clientId, secret)).toBe(true);
    expect(JSON.stringify([...store.clients.values()])).not.toContain(secret);
    expect(audit.events).toEqual([
      {
        eventId: expect.any(String),
        action: 'ClientCreated',
        clientId: CLIENT.clientId,
        tenant: CLIENT.tenant,
        scopes: CLIENT.scopes,
        actor: 'arn:aws:iam::123456789012:user/operator',
        date: clock.now().toISOString(),
      },
    ]);
  });

  it('takes the secret it is given', async () => {
    await createClient(administration, { ...REGISTRATION, secret: CLIENT.secret });

    expect(await authenticates(CLIENT.clientId, CLIENT.secret)).toBe(true);
  });

  it('refuses an id in use, changing and publishing nothing', async () => {
    await createClient(administration, { ...REGISTRATION, secret: CLIENT.secret });

    await expect(createClient(administration, { ...REGISTRATION, tenant: 'other' })).rejects.toBeInstanceOf(
      ClientExistsError,
    );
    expect(store.clients.get(CLIENT.clientId)?.tenant).toBe(CLIENT.tenant);
    expect(audit.events).toHaveLength(1);
  });

  it('replaces an id in use when told to, and audits it as a replacement', async () => {
    await createClient(administration, { ...REGISTRATION, secret: CLIENT.secret });

    await createClient(administration, { ...REGISTRATION, tenant: 'other' }, { replace: true });

    expect(store.clients.get(CLIENT.clientId)?.tenant).toBe('other');
    expect(audit.events.map((event) => event.action)).toEqual(['ClientCreated', 'ClientReplaced']);
  });

  it('refuses an invalid registration before writing anything', async () => {
    await expect(
      createClient(administration, { ...REGISTRATION, scopes: ['payments:all'] }),
    ).rejects.toBeInstanceOf(InvalidClientRegistrationError);
    expect(store.clients.size).toBe(0);
    expect(audit.events).toEqual([]);
  });
});

describe('listing clients', () => {
  it('shows id, tenant, scopes and status, never a secret or a hash', async () => {
    const { secret } = await createClient(administration, REGISTRATION);
    await createClient(administration, { ...REGISTRATION, clientId: 'another', secret: CLIENT.secret });
    await disableClient(administration, 'another');

    const clients = await listClients(administration);

    expect(clients).toEqual([
      {
        clientId: CLIENT.clientId,
        tenant: CLIENT.tenant,
        scopes: CLIENT.scopes,
        createdAt: expect.any(String),
        status: 'active',
        authMethods: ['client_secret_basic', 'client_secret_post'],
        keyIds: [],
        requireDpop: false,
      },
      expect.objectContaining({
        clientId: 'another',
        status: 'disabled',
        disabledAt: clock.now().toISOString(),
      }),
    ]);
    expect(JSON.stringify(clients)).not.toMatch(new RegExp(`scrypt|${secret}|${CLIENT.secret}`));
  });
});

describe('disabling a client', () => {
  it('refuses its secret from then on exactly as an unknown id, and audits it', async () => {
    await createClient(administration, { ...REGISTRATION, secret: CLIENT.secret });

    await disableClient(administration, CLIENT.clientId);

    expect(await authenticates(CLIENT.clientId, CLIENT.secret)).toBe(false);
    expect(audit.events.at(-1)).toMatchObject({ action: 'ClientDisabled', clientId: CLIENT.clientId });
  });

  it('changes nothing and publishes nothing the second time', async () => {
    await createClient(administration, { ...REGISTRATION, secret: CLIENT.secret });
    await disableClient(administration, CLIENT.clientId);
    clock.advance(60);

    const again = await disableClient(administration, CLIENT.clientId);

    expect(again.changed).toBe(false);
    expect(audit.events.map((event) => event.action)).toEqual(['ClientCreated', 'ClientDisabled']);
  });

  it('refuses an unknown client', async () => {
    await expect(disableClient(administration, 'nobody')).rejects.toBeInstanceOf(UnknownClientError);
    expect(audit.events).toEqual([]);
  });
});

describe('rotating a secret', () => {
  beforeEach(async () => {
    await createClient(administration, { ...REGISTRATION, secret: CLIENT.secret });
  });

  it('accepts the new secret at once and the old one until the grace period ends, not after', async () => {
    const { secret } = await rotateClientSecret(administration, CLIENT.clientId, { graceSeconds: 86_400 });

    expect(await authenticates(CLIENT.clientId, secret)).toBe(true);
    expect(await authenticates(CLIENT.clientId, CLIENT.secret)).toBe(true);
    clock.advance(86_399);
    expect(await authenticates(CLIENT.clientId, CLIENT.secret)).toBe(true);
    clock.advance(1);
    expect(await authenticates(CLIENT.clientId, CLIENT.secret)).toBe(false);
    expect(await authenticates(CLIENT.clientId, secret)).toBe(true);
  });

  it('stops the old secret at once with no grace period', async () => {
    await rotateClientSecret(administration, CLIENT.clientId, { graceSeconds: 0 });

    expect(await authenticates(CLIENT.clientId, CLIENT.secret)).toBe(false);
  });

  it('keeps only the secret before the last rotation', async () => {
    const second = await rotateClientSecret(administration, CLIENT.clientId, { graceSeconds: 3600 });
    const third = await rotateClientSecret(administration, CLIENT.clientId, { graceSeconds: 3600 });

    expect(await authenticates(CLIENT.clientId, CLIENT.secret)).toBe(false);
    expect(await authenticates(CLIENT.clientId, second.secret)).toBe(true);
    expect(await authenticates(CLIENT.clientId, third.secret)).toBe(true);
  });

  it('audits the rotation with the end of the grace period and without any secret or hash', async () => {
    const { secret } = await rotateClientSecret(administration, CLIENT.clientId, { graceSeconds: 3600 });

    const event = audit.events.at(-1);
    expect(event).toMatchObject({
      action: 'ClientSecretRotated',
      previousSecretExpiresAt: new Date(clock.now().getTime() + 3600_000).toISOString(),
    });
    expect(JSON.stringify(audit.events)).not.toMatch(new RegExp(`scrypt|${secret}|${CLIENT.secret}`));
  });

  it('refuses when someone else changed the client meanwhile', async () => {
    const stale = store.clients.get(CLIENT.clientId);
    await disableClient(administration, CLIENT.clientId);
    const get = store.get.bind(store);
    store.get = async () => stale ?? get(CLIENT.clientId);

    await expect(
      rotateClientSecret(administration, CLIENT.clientId, { graceSeconds: 0 }),
    ).rejects.toBeInstanceOf(ConcurrentClientChangeError);
    expect(store.clients.get(CLIENT.clientId)?.disabledAt).toBeDefined();
  });

  it.each([-1, 1.5, 31 * 86_400])('refuses a grace period of %s seconds', async (graceSeconds) => {
    await expect(
      rotateClientSecret(administration, CLIENT.clientId, { graceSeconds }),
    ).rejects.toBeInstanceOf(InvalidClientRegistrationError);
  });

  it('refuses a given secret that is too short', async () => {
    await expect(
      rotateClientSecret(administration, CLIENT.clientId, { graceSeconds: 0, secret: 'short' }),
    ).rejects.toBeInstanceOf(InvalidClientRegistrationError);
    expect(await authenticates(CLIENT.clientId, CLIENT.secret)).toBe(true);
  });
});
