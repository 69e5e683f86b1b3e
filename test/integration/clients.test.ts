import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callApi, createClient, type JsonReply, requestToken } from './support/local-service.ts';
import { runScript } from './support/scripts.ts';
import { useLocalService } from './support/use-local-service.ts';

/** `npm run clients` against the running local service, and the token endpoint's answers after each change. */

const service = useLocalService();
/** Every secret the tests saw; none may appear in the audit events. */
const secretsSeen: string[] = [];

// DATA_DIR alone: the tool finds the table's socket in it.
const clients = (...args: string[]) => runScript(service, 'clients', ...args);

const printedSecret = (stdout: string): string => {
  const secret = /client_secret: (\S+)/.exec(stdout)?.[1];
  if (secret === undefined) throw new Error(`no secret printed:\n${stdout}`);
  secretsSeen.push(secret);
  return secret;
};

const tokenRequest = (clientId: string, clientSecret: string): Promise<JsonReply> =>
  callApi(service.baseUrl, '/oauth/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  });

const auditEvents = async () =>
  (await readFile(join(service.dataDir, 'events.jsonl'), 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
    .filter((event) => event.source === 'credit-transfers.clients');

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

describe('npm run clients', () => {
  it('creates a client with a generated secret, shown once, that gets a token', async () => {
    const created = await clients(
      'create',
      '--client-id',
      'cli-created',
      '--scope',
      'transactions:read',
      '--tenant',
      'acme',
    );

    expect(created.code).toBe(0);
    const secret = printedSecret(created.stdout);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    const token = await tokenRequest('cli-created', secret);
    expect(token.status).toBe(200);
    expect(token.body.scope).toBe('transactions:read');
  });

  it('refuses to create an id in use, in one line without a stack trace', async () => {
    await clients('create', '--client-id', 'cli-taken', '--scope', 'transactions:read', '--tenant', 'acme');

    const again = await clients(
      'create',
      '--client-id',
      'cli-taken',
      '--scope',
      'cards:read',
      '--tenant',
      'other',
    );

    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^clients: .*cli-taken exists/)]);
  });

  it('answers bad arguments in one line with exit code 2', async () => {
    for (const args of [
      ['create', '--client-id', 'x'],
      ['rotate-secret', '--client-id', 'x', '--grace', 'soon'],
      ['frobnicate'],
    ]) {
      const result = await clients(...args);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('lists clients with tenant, scopes and status, never a secret or a hash', async () => {
    const created = await clients(
      'create',
      '--client-id',
      'cli-listed',
      '--scope',
      'cards:read cards:write',
      '--tenant',
      'acme',
    );
    const secret = printedSecret(created.stdout);

    const listed = await clients('list');
    const json = await clients('list', '--json');

    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/cli-listed\s+acme\s+active\s+\S+\s+cards:read cards:write/);
    const entry = JSON.parse(json.stdout).find(
      (client: { clientId: string }) => client.clientId === 'cli-listed',
    );
    // Key-based authentication adds its own fields (methods, DPoP, key ids); none of them signs.
    expect(entry).toMatchObject({
      clientId: 'cli-listed',
      tenant: 'acme',
      scopes: ['cards:read', 'cards:write'],
      createdAt: expect.any(String),
      status: 'active',
    });
    for (const output of [listed.stdout, json.stdout]) {
      expect(output).not.toContain(secret);
      expect(output).not.toContain('scrypt');
      expect(output).not.toContain('AUTHENTICATION_FAILURES');
    }
  });

  it('disables a client: its secret is refused as an unknown id is, and so are the tokens issued before', async () => {
    const created = await clients(
      'create',
      '--client-id',
      'cli-disabled',
      '--scope',
      'transactions:read',
      '--tenant',
      'acme',
    );
    const secret = printedSecret(created.stdout);
    const earlier = await requestToken(service.baseUrl, 'transactions:read', {
      clientId: 'cli-disabled',
      clientSecret: secret,
    });

    const disabled = await clients('disable', '--client-id', 'cli-disabled');

    expect(disabled.code).toBe(0);
    const refused = await tokenRequest('cli-disabled', secret);
    const unknown = await tokenRequest('cli-never-existed', secret);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(unknown.body);
    // Never used before, so no cached answer lets it in (revocation.test.ts times the cache).
    const read = await callApi(service.baseUrl, '/v1/payments/credit-transfers/no-such-payment/status', {
      token: earlier,
    });
    expect(read.status).toBe(401);
    expect((await clients('list')).stdout).toMatch(/cli-disabled\s+acme\s+disabled/);
  });

  it('rotates a secret: the new one works at once, the old one during the grace period and not after', async () => {
    const created = await clients(
      'create',
      '--client-id',
      'cli-rotated',
      '--scope',
      'transactions:read',
      '--tenant',
      'acme',
    );
    const oldSecret = printedSecret(created.stdout);

    const rotated = await clients('rotate-secret', '--client-id', 'cli-rotated', '--grace', '10s');
    const rotatedAt = Date.now();

    expect(rotated.code).toBe(0);
    const newSecret = printedSecret(rotated.stdout);
    expect(newSecret).not.toBe(oldSecret);
    expect((await tokenRequest('cli-rotated', newSecret)).status).toBe(200);
    expect((await tokenRequest('cli-rotated', oldSecret)).status).toBe(200);
    expect(Date.now() - rotatedAt).toBeLessThan(10_000);

    await sleep((rotatedAt + 10_500 - Date.now()) / 1000);
    expect((await tokenRequest('cli-rotated', oldSecret)).status).toBe(401);
    expect((await tokenRequest('cli-rotated', newSecret)).status).toBe(200);
  }, 60_000);

  it('keeps npm run client:create working as before, replacing a client with the same id', async () => {
    const client = {
      clientId: 'cli-legacy',
      clientSecret: 'legacy-secret-0123456789',
      scope: 'transactions:read',
      tenant: 'acme',
    };
    secretsSeen.push(client.clientSecret, 'legacy-secret-replaced-0123');
    await createClient(service, client);
    await createClient(service, { ...client, clientSecret: 'legacy-secret-replaced-0123' });

    expect((await tokenRequest('cli-legacy', client.clientSecret)).status).toBe(401);
    expect((await tokenRequest('cli-legacy', 'legacy-secret-replaced-0123')).status).toBe(200);
  });

  it('writes an audit event for every change, with who, what and when, and never a secret', async () => {
    const events = await auditEvents();
    const actions = (clientId: string) =>
      events.filter((event) => event.detail.clientId === clientId).map((event) => event['detail-type']);

    expect(actions('cli-created')).toEqual(['ClientCreated']);
    expect(actions('cli-disabled')).toEqual(['ClientCreated', 'ClientDisabled']);
    expect(actions('cli-rotated')).toEqual(['ClientCreated', 'ClientSecretRotated']);
    expect(actions('cli-legacy')).toEqual(['ClientCreated', 'ClientReplaced']);
    for (const event of events) {
      expect(event).toMatchObject({ id: event.detail.eventId, time: event.detail.date });
      expect(event.detail).toMatchObject({
        actor: expect.stringMatching(/^local:/),
        date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        tenant: 'acme',
      });
    }
    const text = JSON.stringify(events);
    expect(secretsSeen.length).toBeGreaterThan(4);
    for (const secret of secretsSeen) expect(text).not.toContain(secret);
    expect(text).not.toContain('scrypt');
  });
});
