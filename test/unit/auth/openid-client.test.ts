import * as oauth from 'openid-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAuthorizer } from '#auth/authorizer';
import { createIssueTokenHandler } from '#auth/issue-token';
import { getKeySet } from '#auth/key-set';
import { getOpenIdConfiguration } from '#auth/openid-configuration';
import type { TokenKeys, TokenSigner } from '#domain/access/ports';
import { systemClock } from '#domain/commons/ports';
import { ROUTES } from '#routes';
import {
  AUDIENCE,
  authorizerSettings,
  CLIENT,
  type InMemoryClientStore,
  issuerSettings,
  lambdaContext,
  muteLogger,
  proxyEvent,
  RecordingThrottle,
  storeWithClient,
  testSigner,
} from './fakes.ts';

/**
 * openid-client 6 (oauth4webapi) against the real handlers, through its customFetch hook:
 * discovery, then the client credentials grant with both authentication methods.
 */
let store: InMemoryClientStore;
let signer: TokenSigner & TokenKeys;

const serverFor = (issuer: string): oauth.CustomFetch => {
  const base = new URL(issuer).pathname.replace(/\/$/, '');
  const issueToken = createIssueTokenHandler(() => ({
    clients: store,
    keys: signer,
    issuer,
    audience: AUDIENCE,
    throttle: new RecordingThrottle(),
    ...issuerSettings(),
    clock: systemClock,
  }));
  return async (url, options) => {
    const path = new URL(url).pathname.slice(base.length);
    const headers = Object.fromEntries(new Headers(options.headers).entries());
    const result =
      path === '/.well-known/openid-configuration' && options.method === 'GET'
        ? await getOpenIdConfiguration(() => issuer)()
        : path === '/.well-known/jwks.json' && options.method === 'GET'
          ? await getKeySet(() => signer)()
          : path === '/oauth/token' && options.method === 'POST'
            ? await issueToken(proxyEvent({ headers, body: String(options.body) }), lambdaContext)
            : { statusCode: 404, headers: {}, body: '' };
    return new Response(result.body, {
      status: result.statusCode,
      headers: result.headers as Record<string, string>,
    });
  };
};

const discover = (issuer: string, clientAuthentication?: oauth.ClientAuth, secret = CLIENT.secret) =>
  oauth.discovery(new URL(issuer), CLIENT.clientId, secret, clientAuthentication, {
    execute: [oauth.allowInsecureRequests],
    [oauth.customFetch]: serverFor(issuer),
  });

beforeAll(async () => {
  muteLogger();
  signer = testSigner();
  store = await storeWithClient();
});

describe('openid-client 6', () => {
  it('discovers an http loopback issuer and gets a token with client_secret_post', async () => {
    const issuer = 'http://127.0.0.1:3000';
    const configuration = await discover(issuer);

    expect(configuration.serverMetadata().issuer).toBe(issuer);
    const token = await oauth.clientCredentialsGrant(configuration, { scope: 'transactions:read' });

    expect(token).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'transactions:read' });
    const authorize = createAuthorizer(() => ({
      keys: signer,
      clients: store,
      issuer,
      audience: AUDIENCE,
      routes: ROUTES,
      ...authorizerSettings(),
    }));
    const policy = await authorize({
      type: 'TOKEN',
      authorizationToken: `Bearer ${token.access_token}`,
      methodArn:
        'arn:aws:execute-api:local:000000000000:local/live/GET/v1/payments/credit-transfers/p/status',
    });
    expect(policy.context.tenant).toBe(CLIENT.tenant);
  });

  it('discovers an issuer with a path (a stage) and gets a token with client_secret_basic', async () => {
    const configuration = await discover(
      'https://api.example.com/live',
      oauth.ClientSecretBasic(CLIENT.secret),
    );

    const token = await oauth.clientCredentialsGrant(configuration);

    expect(token.scope).toBe(CLIENT.scopes.join(' '));
  });

  it('reads the RFC 6749 error of a refused scope', async () => {
    const configuration = await discover('http://127.0.0.1:3000');

    const refused = oauth.clientCredentialsGrant(configuration, { scope: 'cards:write' });

    await expect(refused).rejects.toBeInstanceOf(oauth.ResponseBodyError);
    await expect(refused).rejects.toMatchObject({ error: 'invalid_scope', status: 400 });
  });

  it('sees the Basic challenge of a refused client', async () => {
    const configuration = await discover('http://127.0.0.1:3000', undefined, 'a-wrong-secret-of-length');

    const refused = oauth.clientCredentialsGrant(configuration);

    await expect(refused).rejects.toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    await expect(refused).rejects.toMatchObject({ status: 401, cause: [{ scheme: 'basic' }] });
  });
});
