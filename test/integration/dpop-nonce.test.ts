import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { callApi, LOCAL_CLIENT } from './support/local-service.ts';
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
