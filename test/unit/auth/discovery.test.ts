import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { getKeySet } from '#auth/key-set';
import { authorizationServerMetadata, getOpenIdConfiguration } from '#auth/openid-configuration';
import { SCOPES } from '#domain/scopes';
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
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: [...SCOPES],
      response_types_supported: [],
      service_documentation: 'http://127.0.0.1:3000/docs',
    });
  });

  it('names endpoints under the URL the client called, not under an issuer nobody can reach', async () => {
    const event = {
      path: '/.well-known/openid-configuration',
      headers: { Host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'X-Forwarded-Proto': 'https' },
      requestContext: {
        domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
        path: '/live/.well-known/openid-configuration',
      },
    } as unknown as APIGatewayProxyEvent;
    const result = await getOpenIdConfiguration(() => 'https://credit-transfers-dev.invalid')(event);

    expect(JSON.parse(result.body)).toMatchObject({
      issuer: 'https://credit-transfers-dev.invalid',
      token_endpoint: 'https://abc123.execute-api.eu-west-1.amazonaws.com/live/oauth/token',
      jwks_uri: 'https://abc123.execute-api.eu-west-1.amazonaws.com/live/.well-known/jwks.json',
    });
  });

  it('keeps the issuer exactly as configured and builds endpoints under its path', () => {
    const metadata = authorizationServerMetadata('https://api.example.com/live/');

    expect(metadata.issuer).toBe('https://api.example.com/live/');
    expect(metadata.token_endpoint).toBe('https://api.example.com/live/oauth/token');
  });
});
