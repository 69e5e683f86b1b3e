import { createHash, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { JWT_BEARER_ASSERTION_TYPE } from '#domain/access/client-assertion';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi } from './support/local-service.ts';
import { runScript } from './support/scripts.ts';
import { useLocalService } from './support/use-local-service.ts';

const service = useLocalService();
const clients = (...args: string[]) => runScript(service, 'clients', ...args);
const TRANSFERS = '/v1/payments/credit-transfers';

interface KeyClient {
  clientId: string;
  alg: 'ES256' | 'PS256';
  privateKey: CryptoKey;
  kid: string;
}

/** A client registered with `npm run clients -- create --jwks FILE`, holding its private key. */
const registerKeyClient = async (alg: 'ES256' | 'PS256', extra: string[] = []): Promise<KeyClient> => {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `key-${randomUUID()}`;
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid };
  const file = join(service.dataDir, `${kid}.jwks.json`);
  await writeFile(file, JSON.stringify({ keys: [jwk] }));
  const clientId = `pkjwt-${alg.toLowerCase()}-${randomUUID().slice(0, 8)}`;
  const created = await clients(
    'create',
    '--client-id',
    clientId,
    '--tenant',
    'keys',
    '--scope',
    'transactions:read transactions:write',
    '--jwks',
    file,
    ...extra,
  );
  expect(created.code, created.stderr).toBe(0);
  return { clientId, alg, privateKey, kid };
};

const discover = (client: KeyClient) =>
  oidc.discovery(
    new URL(service.baseUrl),
    client.clientId,
    {},
    oidc.PrivateKeyJwt({ key: client.privateKey, kid: client.kid }),
    { execute: [oidc.allowInsecureRequests] },
  );

/** An assertion as a client would make it; each test bends one part. */
const assertion = async (
  client: KeyClient,
  options: { alg?: string; aud?: string; jti?: string; expiresIn?: number; iatOffset?: number } = {},
) => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ jti: options.jti ?? randomUUID() })
    .setProtectedHeader({ alg: options.alg ?? client.alg, kid: client.kid })
    .setIssuer(client.clientId)
    .setSubject(client.clientId)
    .setAudience(options.aud ?? service.baseUrl)
    .setIssuedAt(now + (options.iatOffset ?? 0))
    .setExpirationTime(now + (options.expiresIn ?? 60))
    .sign(client.privateKey);
};

const tokenWithAssertion = (clientAssertion: string, extra: Record<string, string> = {}) =>
  callApi(service.baseUrl, '/oauth/token', {
    method: 'POST',
    rawBody: new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: JWT_BEARER_ASSERTION_TYPE,
      client_assertion: clientAssertion,
      ...extra,
    }).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });

let es256: KeyClient;
let ps256: KeyClient;

beforeAll(async () => {
  es256 = await registerKeyClient('ES256');
  ps256 = await registerKeyClient('PS256');
});

describe('private_key_jwt (RFC 7523) with openid-client', () => {
  it('the discovery document names the methods and algorithms', async () => {
    const { body } = await callApi(service.baseUrl, '/.well-known/openid-configuration');
    expect(body.token_endpoint_auth_methods_supported).toEqual([
      'private_key_jwt',
      'client_secret_basic',
      'client_secret_post',
    ]);
    expect(body.token_endpoint_auth_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'EdDSA']);
    expect(body.dpop_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'EdDSA']);
  });

  for (const name of ['ES256', 'PS256'] as const) {
    it(`issues a token for an assertion signed ${name}, and the token works`, async () => {
      const client = name === 'ES256' ? es256 : ps256;
      const config = await discover(client);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'transactions:read' });
      expect(tokens.token_type).toBe('bearer');
      const list = await callApi(service.baseUrl, `${TRANSFERS}?limit=1`, { token: tokens.access_token });
      expect(list.status).toBe(200);
    });
  }

  it('accepts the token endpoint URL as the audience', async () => {
    const reply = await tokenWithAssertion(await assertion(es256, { aud: `${service.baseUrl}/oauth/token` }));
    expect(reply.status).toBe(200);
  });

  it('refuses a replayed assertion: 401 invalid_client', async () => {
    const once = await assertion(es256);
    expect((await tokenWithAssertion(once)).status).toBe(200);
    const replay = await tokenWithAssertion(once);
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe('invalid_client');
  });

  it('refuses an assertion signed RS256 by the client key', async () => {
    // The same RSA key, used for RSASSA-PKCS1-v1_5 instead of PSS.
    const rs256Key = (await importJWK(
      { ...(await exportJWK(ps256.privateKey)), alg: 'RS256' },
      'RS256',
    )) as CryptoKey;
    const reply = await tokenWithAssertion(
      await assertion({ ...ps256, privateKey: rs256Key }, { alg: 'RS256' }),
    );
    expect(reply.status).toBe(401);
    expect(reply.body.error).toBe('invalid_client');
  });

  it('refuses an assertion for another audience', async () => {
    const reply = await tokenWithAssertion(await assertion(es256, { aud: 'https://elsewhere.example' }));
    expect(reply.status).toBe(401);
    expect(reply.body.error).toBe('invalid_client');
  });

  it('refuses an assertion that lives more than 60 s, or was made more than 10 s ahead', async () => {
    expect((await tokenWithAssertion(await assertion(es256, { expiresIn: 600 }))).status).toBe(401);
    expect((await tokenWithAssertion(await assertion(es256, { iatOffset: 30 }))).status).toBe(401);
  });

  it("refuses another client's key, and a key-only client's secret", async () => {
    const forged = await assertion({ ...ps256, clientId: es256.clientId });
    expect((await tokenWithAssertion(forged)).status).toBe(401);
    const secret = await callApi(service.baseUrl, '/oauth/token', {
      body: { grant_type: 'client_credentials', client_id: es256.clientId, client_secret: 'x'.repeat(32) },
    });
    expect(secret.status).toBe(401);
  });

  it('a client allowed both keeps its secret, and loses it once its methods say keys only', async () => {
    const both = await registerKeyClient('ES256', ['--auth-methods', 'private_key_jwt client_secret_post']);
    const created = await clients('list', '--json');
    expect(
      JSON.parse(created.stdout).find((c: { clientId: string }) => c.clientId === both.clientId),
    ).toMatchObject({
      authMethods: ['private_key_jwt', 'client_secret_post'],
    });
    const rotated = await clients('rotate-secret', '--client-id', both.clientId, '--grace', '0');
    const secret = /client_secret: (\S+)/.exec(rotated.stdout)?.[1] as string;
    const bySecret = () =>
      callApi(service.baseUrl, '/oauth/token', {
        body: { grant_type: 'client_credentials', client_id: both.clientId, client_secret: secret },
      });
    expect((await bySecret()).status).toBe(200);
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const file = join(service.dataDir, 'both-next.jwks.json');
    await writeFile(file, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'next' }] }));
    const set = await clients(
      'set-keys',
      '--client-id',
      both.clientId,
      '--jwks',
      file,
      '--auth-methods',
      'private_key_jwt',
    );
    expect(set.code, set.stderr).toBe(0);
    expect((await bySecret()).status).toBe(401);
    // The old key was replaced: its assertions stop too.
    expect((await tokenWithAssertion(await assertion(both))).status).toBe(401);
  }, 180_000);

  it('refuses a key file holding a private key', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const file = join(service.dataDir, 'private.jwks.json');
    await writeFile(file, JSON.stringify({ keys: [await exportJWK(privateKey)] }));
    const reply = await clients(
      'create',
      '--client-id',
      'leaky',
      '--tenant',
      'keys',
      '--scope',
      'transactions:read',
      '--jwks',
      file,
    );
    expect(reply.code).toBe(1);
    expect(reply.stderr).toMatch(/private key/);
  });
});

describe('DPoP-bound tokens (RFC 9449) with openid-client', () => {
  const boundSession = async () => {
    const config = await discover(ps256);
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const tokens = await oidc.clientCredentialsGrant(config, {}, { DPoP });
    const call = (path: string, method = 'GET', body?: unknown) =>
      oidc.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(`${service.baseUrl}${path}`),
        method,
        body === undefined ? undefined : JSON.stringify(body),
        new Headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        { DPoP },
      );
    return { tokens, call };
  };

  it('binds the token to the proof key, and every operation takes it with a fresh proof', async () => {
    const { tokens, call } = await boundSession();
    expect(tokens.token_type).toBe('dpop');
    const [, payload] = tokens.access_token.split('.');
    expect(JSON.parse(Buffer.from(payload as string, 'base64url').toString()).cnf.jkt).toEqual(
      expect.any(String),
    );

    const initiated = await call(TRANSFERS, 'POST', minimalCreditTransfer());
    expect(initiated.status).toBe(202);
    const { paymentId } = (await initiated.json()) as { paymentId: string };
    expect((await call(`${TRANSFERS}/${paymentId}/status`)).status).toBe(200);
    expect((await call(`${TRANSFERS}?limit=5`)).status).toBe(200);
    const cancelled = await call(`${TRANSFERS}/${paymentId}/cancellation`, 'POST', {});
    expect([200, 202, 409]).toContain(cancelled.status);
  });

  const dpopCall = (
    token: string,
    proof: string | undefined,
    path = `${TRANSFERS}?limit=1`,
    scheme = 'DPoP',
  ) =>
    callApi(service.baseUrl, path, {
      headers: { Authorization: `${scheme} ${token}`, ...(proof !== undefined && { DPoP: proof }) },
    });

  /** A proof made by hand with the bound key, so a test can send it twice or bend it. */
  const handMadeProof = async (
    key: { publicKey: CryptoKey; privateKey: CryptoKey },
    token: string,
    url: string,
  ) =>
    new SignJWT({
      htm: 'GET',
      htu: url,
      jti: randomUUID(),
      ath: createHash('sha256').update(token).digest('base64url'),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(key.publicKey) })
      .setIssuedAt()
      .sign(key.privateKey);

  it('refuses a replayed proof, a proof for another URL, a missing proof and the bound token as Bearer', async () => {
    const config = await discover(ps256);
    const key = await oidc.randomDPoPKeyPair('ES256');
    const tokens = await oidc.clientCredentialsGrant(config, {}, { DPoP: oidc.getDPoPHandle(config, key) });
    const token = tokens.access_token;
    const url = `${service.baseUrl}${TRANSFERS}`;

    const proof = await handMadeProof(key, token, url);
    expect((await dpopCall(token, proof)).status).toBe(200);
    const replayed = await dpopCall(token, proof);
    expect(replayed.status).toBe(401);
    expect(replayed.headers.get('www-authenticate')).toMatch(/DPoP .*error="invalid_dpop_proof"/);
    expect(replayed.body).toMatchObject({ status: 401 });

    const elsewhere = await handMadeProof(key, token, `${service.baseUrl}/v1/webhooks/endpoints`);
    expect((await dpopCall(token, elsewhere)).status).toBe(401);
    expect((await dpopCall(token, undefined)).status).toBe(401);
    expect(
      (await dpopCall(token, await handMadeProof(key, token, url), `${TRANSFERS}?limit=1`, 'Bearer')).status,
    ).toBe(401);
    // Another key's proof, however fresh.
    const other = await oidc.randomDPoPKeyPair('ES256');
    expect((await dpopCall(token, await handMadeProof(other, token, url))).status).toBe(401);
  });
});
