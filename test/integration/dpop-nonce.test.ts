import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { JWT_BEARER_ASSERTION_TYPE } from '#domain/access/client-assertion';
import { callApi, LOCAL_CLIENT } from './support/local-service.ts';
import { runScript } from './support/scripts.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * DPoP server nonces (RFC 9449 8) at the token endpoint, on by a setting (DPOP_NONCE_SECRET here,
 * `-c dpopNonces=true` on a stage): a proof without a fresh nonce is refused with
 * `use_dpop_nonce` and a `DPoP-Nonce` to use, which a maintained client (openid-client) follows.
 */
const service = useLocalService({ env: { DPOP_NONCE_SECRET: 'a-local-nonce-secret-0123456789abcdef' } });

const proofFor = async (
  key: Awaited<ReturnType<typeof generateKeyPair>>,
  claims: Record<string, unknown> = {},
): Promise<string> =>
  new SignJWT({ htm: 'POST', htu: `${service.baseUrl}/oauth/token`, jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(key.publicKey) })
    .setIssuedAt()
    .sign(key.privateKey);

const tokenRequest = (proof: string) =>
  callApi(service.baseUrl, '/oauth/token', {
    method: 'POST',
    rawBody: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: LOCAL_CLIENT.clientId,
      client_secret: LOCAL_CLIENT.clientSecret,
      scope: 'transactions:read',
    }).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: proof },
  });

describe('DPoP server nonces at the token endpoint', () => {
  it('refuse a proof without a nonce, or with a made-up one, with use_dpop_nonce and a nonce to use', async () => {
    const key = await generateKeyPair('ES256', { extractable: true });

    const bare = await tokenRequest(await proofFor(key));
    expect(bare.status).toBe(400);
    expect(bare.body).toMatchObject({ error: 'use_dpop_nonce' });
    const nonce = bare.headers.get('dpop-nonce');
    expect(nonce).toEqual(expect.any(String));

    const madeUp = await tokenRequest(
      await proofFor(key, { nonce: `${nonce?.split('.')[0]}.${'A'.repeat(22)}` }),
    );
    expect(madeUp.status).toBe(400);
    expect(madeUp.body).toMatchObject({ error: 'use_dpop_nonce' });

    const withNonce = await tokenRequest(await proofFor(key, { nonce }));
    expect(withNonce.status, JSON.stringify(withNonce.body)).toBe(200);
    expect(withNonce.body).toMatchObject({ token_type: 'DPoP' });
    expect(withNonce.headers.get('dpop-nonce')).toEqual(expect.any(String));
  });

  it('are followed by openid-client, and the bound token then works on the API', async () => {
    const config = await oidc.discovery(
      new URL(service.baseUrl),
      LOCAL_CLIENT.clientId,
      {},
      oidc.ClientSecretPost(LOCAL_CLIENT.clientSecret),
      { execute: [oidc.allowInsecureRequests] },
    );
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'transactions:read' }, { DPoP });
    expect(tokens.token_type).toBe('dpop');

    const list = await oidc.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${service.baseUrl}/v1/payments/credit-transfers?limit=1`),
      'GET',
      undefined,
      undefined,
      { DPoP },
    );
    expect(list.status).toBe(200);
  });
});

/** A private_key_jwt client, registered with `npm run clients -- create --jwks FILE`. */
const registerKeyClient = async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `key-${randomUUID()}`;
  const file = join(service.dataDir, `${kid}.jwks.json`);
  await writeFile(file, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid }] }));
  const clientId = `nonce-${randomUUID().slice(0, 8)}`;
  const registered = await runScript(
    service,
    'clients',
    'create',
    '--client-id',
    clientId,
    '--tenant',
    'keys',
    '--scope',
    'transactions:read',
    '--jwks',
    file,
  );
  expect(registered.code, registered.stderr).toBe(0);
  return { clientId, kid, privateKey };
};

describe('DPoP server nonces with private_key_jwt', () => {
  it('the request sent again with the nonce and the same assertion is answered; the assertion once used is refused', async () => {
    const client = await registerKeyClient();
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: client.kid })
      .setIssuer(client.clientId)
      .setSubject(client.clientId)
      .setAudience(service.baseUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(client.privateKey);
    const key = await generateKeyPair('ES256', { extractable: true });
    const request = (proof: string) =>
      callApi(service.baseUrl, '/oauth/token', {
        method: 'POST',
        rawBody: new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: JWT_BEARER_ASSERTION_TYPE,
          client_assertion: assertion,
        }).toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: proof },
      });

    const first = await request(await proofFor(key));
    expect(first.status).toBe(400);
    expect(first.body).toMatchObject({ error: 'use_dpop_nonce' });
    const nonce = first.headers.get('dpop-nonce');

    const again = await request(await proofFor(key, { nonce }));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ token_type: 'DPoP' });

    const replay = await request(await proofFor(key, { nonce: again.headers.get('dpop-nonce') }));
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ error: 'invalid_client' });
  });

  it('are followed by openid-client authenticating with a key', async () => {
    const client = await registerKeyClient();
    const config = await oidc.discovery(
      new URL(service.baseUrl),
      client.clientId,
      {},
      oidc.PrivateKeyJwt({ key: client.privateKey, kid: client.kid }),
      { execute: [oidc.allowInsecureRequests] },
    );
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'transactions:read' }, { DPoP });
    expect(tokens.token_type).toBe('dpop');
  });
});
