import { generateKeyPairSync } from 'node:crypto';
import { rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callApi, requestToken } from './support/local-service.ts';
import { runScript } from './support/scripts.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * `npm run keys -- rotate` and `retire` against the local runtime, running and restarted: tokens
 * issued before a rotation keep working until the previous key is retired, which is refused while
 * they can still be live. The authorizer's cache is off, so every request is verified afresh.
 */
const ENV = { LOCAL_AUTHORIZER_CACHE_SECONDS: '0' };

const service = useLocalService({ env: ENV });

const headerOf = (token: string): { kid: string; alg: string } =>
  JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString());

const kidOf = (token: string): string => headerOf(token).kid;

const publishedKids = async (): Promise<string[]> =>
  ((await callApi(service.baseUrl, '/.well-known/jwks.json')).body.keys as { kid: string }[]).map(
    (key) => key.kid,
  );

const statusWith = async (token: string): Promise<number> =>
  (await callApi(service.baseUrl, '/v1/payments/credit-transfers/no-such-payment/status', { token })).status;

/** Polls for up to 5 s: a running service looks at its key files once a second. */
const eventually = async <T>(read: () => Promise<T>, expected: T): Promise<void> => {
  const until = Date.now() + 5000;
  for (;;) {
    const value = await read();
    if (JSON.stringify(value) === JSON.stringify(expected) || Date.now() > until) {
      expect(value).toEqual(expected);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

describe('rotating the token signing key locally', () => {
  it('publishes and signs with a new key, keeps the old tokens working across a restart until retired', async () => {
    const { dataDir } = service;
    const before = await requestToken(service.baseUrl, 'transactions:read');
    const oldKid = kidOf(before);
    expect(await publishedKids()).toEqual([oldKid]);
    // A new data folder's first key signs ES256 (FAPI 2.0).
    expect(headerOf(before).alg).toBe('ES256');

    const rotated = await runScript(service, 'keys', 'rotate');
    expect(rotated.code, rotated.stderr).toBe(0);

    // The running service: the new key signs within a second, and both are published.
    await eventually(async () => (await publishedKids()).length, 2);
    const [newKid] = await publishedKids();
    expect(newKid).not.toBe(oldKid);
    expect(await publishedKids()).toEqual([newKid, oldKid]);
    const after = await requestToken(service.baseUrl, 'transactions:read');
    expect(kidOf(after)).toBe(newKid);
    expect(await statusWith(before)).toBe(404);
    expect(await statusWith(after)).toBe(404);

    // Live tokens of the old key: neither a retirement nor a second rotation may cut them off yet.
    const early = await runScript(service, 'keys', 'retire');
    expect(early.code).toBe(1);
    expect(early.stderr.trim()).toMatch(/^keys: the previous key .* may verify live tokens until /);
    const again = await runScript(service, 'keys', 'rotate');
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toMatch(/^keys: the previous key .* may verify live tokens until /);

    // A restart keeps both keys (on the same public port: the tokens name it as their issuer).
    await service.stop();
    await service.startAgain({ samePort: true });
    expect(await publishedKids()).toEqual([newKid, oldKid]);
    expect(await statusWith(before)).toBe(404);
    expect(await statusWith(after)).toBe(404);
    const status = await runScript(service, 'keys', 'status');
    expect(status.stdout).toContain(`Signs:    ${newKid}`);
    expect(status.stdout).toContain(`Verifies: ${oldKid}`);

    // An hour (and a minute) later, as the current key file's time tells it: the old key retires.
    const anHourAgo = new Date(Date.now() - 3_700_000);
    await utimes(join(dataDir, 'signing-key.pem'), anHourAgo, anHourAgo);
    const retired = await runScript(service, 'keys', 'retire');
    expect(retired.code, retired.stderr).toBe(0);
    expect(retired.stdout).toContain(`Retired the previous key ${oldKid}`);

    await eventually(publishedKids, [newKid]);
    expect(await statusWith(before)).toBe(401);
    expect(await statusWith(after)).toBe(404);
  }, 180_000);

  it('retires a key thought compromised at once with --now, refusing its tokens', async () => {
    const before = await requestToken(service.baseUrl, 'transactions:read');
    const rotated = await runScript(service, 'keys', 'rotate');
    expect(rotated.code, rotated.stderr).toBe(0);
    await eventually(async () => (await publishedKids()).length, 2);
    expect(await statusWith(before)).toBe(404);

    const retired = await runScript(service, 'keys', 'retire', '--now');
    expect(retired.code, retired.stderr).toBe(0);

    await eventually(async () => (await publishedKids()).length, 1);
    expect(await statusWith(before)).toBe(401);
    expect(await statusWith(await requestToken(service.baseUrl, 'transactions:read'))).toBe(404);
  }, 120_000);

  it("keeps a data folder's RS256 key signing until a rotation moves it to ES256, RS256 tokens in flight working until the old key is retired", async () => {
    // A data folder made before ES256 was the default: its RSA key file is kept, and signs RS256.
    await service.stop();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await writeFile(
      join(service.dataDir, 'signing-key.pem'),
      privateKey.export({ type: 'pkcs8', format: 'pem' }),
      {
        mode: 0o600,
      },
    );
    await rm(join(service.dataDir, 'signing-key.previous.pem'), { force: true });
    await service.startAgain();
    const rs256Token = await requestToken(service.baseUrl, 'transactions:read');
    expect(headerOf(rs256Token).alg).toBe('RS256');
    expect((await callApi(service.baseUrl, '/.well-known/jwks.json')).body.keys).toEqual([
      expect.objectContaining({ kty: 'RSA', alg: 'RS256' }),
    ]);

    // Calls with the RS256 token go on while the key changes: none of them may be refused.
    let rotating = true;
    const inFlight: number[] = [];
    const caller = (async () => {
      while (rotating) inFlight.push(await statusWith(rs256Token));
    })();
    const rotated = await runScript(service, 'keys', 'rotate', '--algorithm', 'ES256');
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/Signs now: +\S+ ES256/);
    await eventually(async () => (await publishedKids()).length, 2);
    const es256Token = await requestToken(service.baseUrl, 'transactions:read');
    rotating = false;
    await caller;
    expect(inFlight.length).toBeGreaterThan(0);
    expect(new Set(inFlight)).toEqual(new Set([404]));

    // The key set publishes the new EC key first and the old RSA key beside it, each with its algorithm.
    const { keys } = (await callApi(service.baseUrl, '/.well-known/jwks.json')).body as {
      keys: { kty: string; alg: string; kid: string; crv?: string }[];
    };
    expect(keys.map(({ kty, alg, crv }) => ({ kty, alg, crv }))).toEqual([
      { kty: 'EC', alg: 'ES256', crv: 'P-256' },
      { kty: 'RSA', alg: 'RS256', crv: undefined },
    ]);
    expect(headerOf(es256Token)).toMatchObject({ alg: 'ES256', kid: keys[0]?.kid });
    expect(await statusWith(rs256Token)).toBe(404);
    expect(await statusWith(es256Token)).toBe(404);

    // A later rotation keeps ES256 without being told; retiring the RSA key ends its tokens.
    const retired = await runScript(service, 'keys', 'retire', '--now');
    expect(retired.code, retired.stderr).toBe(0);
    await eventually(async () => (await publishedKids()).length, 1);
    expect(await statusWith(rs256Token)).toBe(401);
    expect(await statusWith(es256Token)).toBe(404);
    const status = await runScript(service, 'keys', 'status');
    expect(status.stdout).toMatch(/Signs: +\S+ ES256/);
  }, 120_000);
});
