import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { getKeySet } from '#auth/key-set';
import { getOpenIdConfiguration, handler } from '#auth/openid-configuration';
import { authorizationServerMetadata } from '#domain/access/authorization-server-metadata';
import { SCOPES } from '#domain/access/scopes';
import { testSigner } from './fakes.ts';

describe('GET /.well-known/jwks.json', () => {
  it('answers the public signing key, cacheable for 300 seconds', async () => {
    const signer = testSigner();

    const result = await getKeySet(() => signer)();

    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'public, max-age=300',
    });
    const { keys } = JSON.parse(result.body);
    expect(keys).toEqual([
      { kty: 'RSA', n: expect.any(String), e: 'AQAB', kid: await signer.keyId(), alg: 'RS256', use: 'sig' },
    ]);
  });
});

describe('GET /.well-known/openid-configuration', () => {
  it('describes the client credentials server at the issuer', async () => {
    const result = await getOpenIdConfiguration(() => 'http://127.0.0.1:3000')();

    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toEqual({
      issuer: 'http://127.0.0.1:3000',
      token_endpoint: 'http://127.0.0.1:3000/oauth/token',
      jwks_uri: 'http://127.0.0.1:3000/.well-known/jwks.json',
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['private_key_jwt', 'client_secret_basic', 'client_secret_post'],
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'PS256', 'EdDSA'],
      dpop_signing_alg_values_supported: ['ES256', 'PS256', 'EdDSA'],
      scopes_supported: [...SCOPES],
      response_types_supported: [],
      service_documentation: 'http://127.0.0.1:3000/docs',
    });
  });

  it('names endpoints under the configured public URL, not under an issuer nobody can reach', async () => {
    const result = await getOpenIdConfiguration(
      () => 'https://credit-transfers-dev.invalid',
      () => 'https://abc123.execute-api.eu-west-1.amazonaws.com/live',
    )();

    expect(JSON.parse(result.body)).toMatchObject({
      issuer: 'https://credit-transfers-dev.invalid',
      token_endpoint: 'https://abc123.execute-api.eu-west-1.amazonaws.com/live/oauth/token',
      jwks_uri: 'https://abc123.execute-api.eu-west-1.amazonaws.com/live/.well-known/jwks.json',
    });
  });

  it('never reflects a forged Host: every URL comes from ISSUER and PUBLIC_URL', async () => {
    const saved = { ISSUER: process.env.ISSUER, PUBLIC_URL: process.env.PUBLIC_URL };
    Object.assign(process.env, {
      ISSUER: 'https://credit-transfers.example.com',
      PUBLIC_URL: 'https://api.example.com/live',
    });
    try {
      const forged = {
        httpMethod: 'GET',
        path: '/.well-known/openid-configuration',
        resource: '/.well-known/openid-configuration',
        headers: {
          Host: 'attacker.example',
          'X-Forwarded-Proto': 'http',
          'X-Forwarded-Host': 'attacker.example',
        },
        multiValueHeaders: { Host: ['attacker.example'] },
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: null,
        requestContext: { domainName: 'attacker.example', path: '/evil/.well-known/openid-configuration' },
        body: null,
        isBase64Encoded: false,
      } as unknown as APIGatewayProxyEvent;
      const result = await handler(forged, {} as Context);

      expect(result.statusCode).toBe(200);
      expect(result.body).not.toMatch(/attacker|evil/);
      expect(JSON.parse(result.body)).toMatchObject({
        issuer: 'https://credit-transfers.example.com',
        token_endpoint: 'https://api.example.com/live/oauth/token',
        jwks_uri: 'https://api.example.com/live/.well-known/jwks.json',
        service_documentation: 'https://api.example.com/live/docs',
      });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('keeps the issuer exactly as configured and builds endpoints under its path', () => {
    const metadata = authorizationServerMetadata('https://api.example.com/live/');

    expect(metadata.issuer).toBe('https://api.example.com/live/');
    expect(metadata.token_endpoint).toBe('https://api.example.com/live/oauth/token');
  });
});
