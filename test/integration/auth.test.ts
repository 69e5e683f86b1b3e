import { createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '#domain/access/scopes';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, LOCAL_CLIENT, requestToken } from './support/local-service.ts';
import { rawRequest } from './support/raw-http.ts';
import { useLocalService } from './support/use-local-service.ts';

const TRANSFERS = '/v1/payments/credit-transfers';

const service = useLocalService();
let signingKey: KeyObject;
let keyId: string;

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token shaped like the service's own, signed with `key`; each test bends one part of it. */
const forgeToken = (
  claims: Record<string, unknown> = {},
  options: { key?: KeyObject; header?: Record<string, unknown>; unsigned?: boolean } = {},
) => {
  const now = Math.floor(Date.now() / 1000);
  const key = options.key ?? signingKey;
  const ec = key.asymmetricKeyType === 'ec';
  const header = { alg: ec ? 'ES256' : 'RS256', typ: 'JWT', kid: keyId, ...options.header };
  const payload = {
    iss: service.baseUrl,
    sub: LOCAL_CLIENT.clientId,
    aud: 'credit-transfers',
    iat: now,
    exp: now + 3600,
    jti: crypto.randomUUID(),
    scope: 'transactions:read transactions:write',
    tenant: 'local',
    client_id: LOCAL_CLIENT.clientId,
    ...claims,
  };
  const input = `${base64url(header)}.${base64url(payload)}`;
  if (options.unsigned) return `${input}.`;
  // JWS wants an ECDSA signature as r||s, not DER (RFC 7518 3.4).
  const signature = sign('sha256', Buffer.from(input), ec ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${signature.toString('base64url')}`;
};

const tokenRequest = (body: string, headers: Record<string, string>) =>
  callApi(service.baseUrl, '/oauth/token', { method: 'POST', rawBody: body, headers });

beforeAll(async () => {
  signingKey = createPrivateKey(await readFile(join(service.dataDir, 'signing-key.pem')));
  keyId = (await callApi(service.baseUrl, '/.well-known/jwks.json')).body.keys[0].kid;
});

describe('token endpoint', () => {
  it("issues a token for the spec's JSON body", async () => {
    const reply = await tokenRequest(
      JSON.stringify({
        grant_type: 'client_credentials',
        client_id: LOCAL_CLIENT.clientId,
        client_secret: LOCAL_CLIENT.clientSecret,
        scope: 'transactions:read',
      }),
      { 'Content-Type': 'application/json' },
    );
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'transactions:read' });
    expect(reply.body.access_token.split('.')).toHaveLength(3);
    expect(reply.headers.get('cache-control')).toContain('no-store');
  });

  it('issues a token for a form-encoded body with client_secret_post', async () => {
    const reply = await tokenRequest(
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: LOCAL_CLIENT.clientId,
        client_secret: LOCAL_CLIENT.clientSecret,
      }).toString(),
      { 'Content-Type': 'application/x-www-form-urlencoded' },
    );
    expect(reply.status).toBe(200);
    // No scope asked: every scope the client is allowed.
    expect(reply.body.scope.split(' ')).toHaveLength(SCOPES.length);
  });

  it('issues a token for HTTP Basic credentials', async () => {
    const basic = Buffer.from(`${LOCAL_CLIENT.clientId}:${LOCAL_CLIENT.clientSecret}`).toString('base64');
    const reply = await tokenRequest('grant_type=client_credentials&scope=transactions%3Awrite', {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${basic}`,
    });
    expect(reply.status).toBe(200);
    expect(reply.body.scope).toBe('transactions:write');
  });

  it("answers a body over 64 KiB with 413 in the token endpoint's own content type", async () => {
    const reply = await tokenRequest(
      JSON.stringify({ grant_type: 'client_credentials', pad: 'x'.repeat(70_000) }),
      {
        'Content-Type': 'application/json',
      },
    );
    expect(reply.status).toBe(413);
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.body.error).toBe('payload_too_large');
  });

  it('answers a wrong secret with 401 invalid_client', async () => {
    const reply = await tokenRequest(
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: LOCAL_CLIENT.clientId,
        client_secret: 'not-the-secret',
      }).toString(),
      { 'Content-Type': 'application/x-www-form-urlencoded' },
    );
    expect(reply.status).toBe(401);
    expect(reply.body.error).toBe('invalid_client');
    expect(reply.body.error_description).toEqual(expect.any(String));
  });

  it('answers an unknown grant type with 400 unsupported_grant_type', async () => {
    const reply = await tokenRequest(
      JSON.stringify({
        grant_type: 'password',
        client_id: LOCAL_CLIENT.clientId,
        client_secret: LOCAL_CLIENT.clientSecret,
      }),
      { 'Content-Type': 'application/json' },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('unsupported_grant_type');
  });

  it('answers a scope the client is not allowed with 400 invalid_scope', async () => {
    const reply = await tokenRequest(
      JSON.stringify({
        grant_type: 'client_credentials',
        client_id: LOCAL_CLIENT.clientId,
        client_secret: LOCAL_CLIENT.clientSecret,
        scope: 'transactions:read payments:admin',
      }),
      { 'Content-Type': 'application/json' },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_scope');
  });

  it('is discovered by OAuth clients at the RFC 8414 path too', async () => {
    const config = await oidc.discovery(
      new URL(service.baseUrl),
      LOCAL_CLIENT.clientId,
      LOCAL_CLIENT.clientSecret,
      undefined,
      { execute: [oidc.allowInsecureRequests], algorithm: 'oauth2' },
    );
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'transactions:read' });
    expect(tokens.scope).toBe('transactions:read');
  });

  it('works with a standard OAuth client (openid-client), from discovery to an API call', async () => {
    const config = await oidc.discovery(
      new URL(service.baseUrl),
      LOCAL_CLIENT.clientId,
      LOCAL_CLIENT.clientSecret,
      undefined,
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'transactions:write' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expiresIn()).toBeGreaterThan(3500);

    const reply = await callApi(service.baseUrl, TRANSFERS, {
      token: tokens.access_token,
      body: minimalCreditTransfer(),
    });
    expect(reply.status).toBe(202);
  });
});

describe('refused tokens', () => {
  const expectRefusal = async (token: string | undefined, status: 401 | 403, error: string) => {
    const reply = await callApi(service.baseUrl, TRANSFERS, {
      body: minimalCreditTransfer(),
      ...(token !== undefined && { headers: { Authorization: token } }),
    });
    expect(reply.status).toBe(status);
    expect(reply.body.error).toBe(error);
    expect(reply.body.error_description).toEqual(expect.any(String));
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
  };

  it('answers a request without a token with 401', () => expectRefusal(undefined, 401, 'unauthorized'));
  it('answers a malformed token with 401', () => expectRefusal('Bearer not.a.jwt', 401, 'unauthorized'));
  it('answers a token without the Bearer scheme with 401', () =>
    expectRefusal(forgeToken(), 401, 'unauthorized'));

  it('answers a token signed by another key with 401', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return expectRefusal(`Bearer ${forgeToken({}, { key: privateKey })}`, 401, 'unauthorized');
  });

  it('answers an unsigned token (alg none) with 401', () =>
    expectRefusal(
      `Bearer ${forgeToken({}, { header: { alg: 'none' }, unsigned: true })}`,
      401,
      'unauthorized',
    ));

  it('answers an expired token with 401', () => {
    const past = Math.floor(Date.now() / 1000) - 7200;
    return expectRefusal(`Bearer ${forgeToken({ iat: past, exp: past + 3600 })}`, 401, 'unauthorized');
  });

  it('answers a token from another issuer with 401', () =>
    expectRefusal(`Bearer ${forgeToken({ iss: 'https://issuer.invalid' })}`, 401, 'unauthorized'));

  it('answers a token for another audience with 401', () =>
    expectRefusal(`Bearer ${forgeToken({ aud: 'another-api' })}`, 401, 'unauthorized'));

  it('answers a valid token without the operation scope with 403 insufficient_scope', async () => {
    const readOnly = await requestToken(service.baseUrl, 'transactions:read');
    await expectRefusal(`Bearer ${readOnly}`, 403, 'insufficient_scope');
  });

  it('names the missing scope in WWW-Authenticate (RFC 6750 3) and in error_description', async () => {
    const readOnly = await requestToken(service.baseUrl, 'transactions:read');
    const write = await callApi(service.baseUrl, TRANSFERS, {
      token: readOnly,
      body: minimalCreditTransfer(),
    });
    expect(write.status).toBe(403);
    expect(write.headers.get('www-authenticate')).toBe(
      'Bearer realm="credit-transfers", error="insufficient_scope", scope="transactions:write", error_description="The access token does not carry the scope transactions:write"',
    );
    expect(write.body).toMatchObject({
      error: 'insufficient_scope',
      error_description: 'The access token does not carry the scope transactions:write',
      detail: 'The access token does not carry the scope transactions:write',
    });

    const writeOnly = await requestToken(service.baseUrl, 'transactions:write');
    const hooks = await callApi(service.baseUrl, '/v1/webhook-endpoints', { token: writeOnly });
    expect(hooks.status).toBe(403);
    expect(hooks.headers.get('www-authenticate')).toContain('scope="webhooks:manage"');
    expect(hooks.body.error_description).toBe('The access token does not carry the scope webhooks:manage');
  });

  it('accepts the same forged-shape token when it is genuinely signed: the refusals above are about one flaw each', async () => {
    const reply = await callApi(service.baseUrl, TRANSFERS, {
      token: forgeToken(),
      body: minimalCreditTransfer(),
    });
    expect(reply.status).toBe(202);
  });

  it('keeps a read-only token out of writes even after it was accepted for a read (cached policy)', async () => {
    const readOnly = await requestToken(service.baseUrl, 'transactions:read');
    const read = await callApi(service.baseUrl, `${TRANSFERS}/unknown-id/status`, { token: readOnly });
    expect(read.status).toBe(404);
    const write = await callApi(service.baseUrl, TRANSFERS, {
      token: readOnly,
      body: minimalCreditTransfer(),
    });
    expect(write.status).toBe(403);
  });
});

describe('discovery and unknown routes', () => {
  it('publishes the key set and the authorization server metadata', async () => {
    const keys = await callApi(service.baseUrl, '/.well-known/jwks.json');
    expect(keys.status).toBe(200);
    // A new data folder's first key signs ES256 (FAPI 2.0), and so do its tokens.
    expect(keys.body.keys).toEqual([
      expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: keyId }),
    ]);
    expect(keys.body.keys[0]).not.toHaveProperty('d');
    const token = await requestToken(service.baseUrl, 'transactions:read');
    expect(JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString())).toEqual({
      alg: 'ES256',
      typ: 'JWT',
      kid: keyId,
    });

    const metadata = await callApi(service.baseUrl, '/.well-known/openid-configuration');
    const rfc8414 = await callApi(service.baseUrl, '/.well-known/oauth-authorization-server');
    expect(rfc8414.body).toEqual(metadata.body);
    expect(metadata.body).toMatchObject({
      issuer: service.baseUrl,
      token_endpoint: `${service.baseUrl}/oauth/token`,
      jwks_uri: `${service.baseUrl}/.well-known/jwks.json`,
    });
  });

  it('never reflects a forged Host: discovery, the document and Location come from PUBLIC_URL', async () => {
    const token = await requestToken(service.baseUrl, 'transactions:write');
    // Straight to the service, not through the proxy: the Host line is exactly the forged one.
    const forged = (method: string, path: string, headers: string[] = [], body = '') =>
      rawRequest(service.serviceUrl, [
        [
          `${method} ${path} HTTP/1.1`,
          'Host: attacker.example',
          'X-Forwarded-Host: attacker.example',
          'X-Forwarded-Proto: https',
          'Forwarded: host=attacker.example;proto=https',
          'Connection: close',
          ...headers,
          ...(body === '' ? [] : [`Content-Length: ${Buffer.byteLength(body)}`]),
          '',
          body,
        ].join('\r\n'),
      ]);

    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const metadata = await forged('GET', path);
      expect(metadata.status, metadata.body).toBe(200);
      expect(metadata.body).not.toContain('attacker');
      expect(metadata.json).toMatchObject({
        issuer: service.baseUrl,
        token_endpoint: `${service.baseUrl}/oauth/token`,
        jwks_uri: `${service.baseUrl}/.well-known/jwks.json`,
        service_documentation: `${service.baseUrl}/docs`,
      });
      // The same answer for every request: cacheable, with nothing to vary on.
      expect(metadata.headers['cache-control']?.[0]).toBe('public, max-age=300');
    }

    const document = await forged('GET', '/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body).not.toContain('attacker');
    expect(document.json.servers).toEqual([expect.objectContaining({ url: service.baseUrl })]);

    const initiated = await forged(
      'POST',
      TRANSFERS,
      [`Authorization: Bearer ${token}`, 'Content-Type: application/json'],
      JSON.stringify(minimalCreditTransfer()),
    );
    expect(initiated.status, initiated.body).toBe(202);
    expect(initiated.headers.location).toEqual([
      `${service.baseUrl}${TRANSFERS}/${initiated.json.paymentId}/status`,
    ]);
  });

  it('answers an unknown path with 404 in the problem shape', async () => {
    const reply = await callApi(service.baseUrl, '/v1/payments/unknown', { method: 'GET' });
    expect(reply.status).toBe(404);
    expect(reply.body.error).toBe('not_found');
  });

  it('answers a method a known path does not have with 405 and the methods it has in Allow', async () => {
    for (const [method, path, allowed] of [
      ['DELETE', TRANSFERS, ['GET', 'POST']],
      ['PUT', `${TRANSFERS}/any-id/status`, ['GET']],
      ['GET', '/oauth/token', ['POST']],
    ] as const) {
      const reply = await callApi(service.baseUrl, path, { method });
      expect(reply.status, `${method} ${path}`).toBe(405);
      expect(reply.body.error).toBe('method_not_allowed');
      expect(reply.headers.get('allow')?.split(', ').sort(), `${method} ${path}`).toEqual(allowed);
    }
  });
});
