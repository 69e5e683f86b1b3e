import type { APIGatewayProxyEvent } from 'aws-lambda';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createIssueTokenHandler } from '#auth/issue-token';
import type { TokenKeys, TokenSigner } from '#domain/access/ports';
import { registerClient } from '#domain/access/register-client';
import { systemClock } from '#domain/commons/ports';
import {
  AUDIENCE,
  basic,
  CLIENT,
  decodeJwt,
  type InMemoryClientStore,
  ISSUER,
  issuerSettings,
  lambdaContext,
  muteLogger,
  proxyEvent,
  RecordingThrottle,
  storeWithClient,
  testSigner,
} from './fakes.ts';

let store: InMemoryClientStore;
let signer: TokenSigner & TokenKeys;
let throttle: RecordingThrottle;
/** The stage's setting: `-c clientSecrets=false` sets it false. */
let clientSecretsAllowed = true;
const handler = createIssueTokenHandler(() => ({
  clients: store,
  keys: signer,
  issuer: ISSUER,
  audience: AUDIENCE,
  throttle,
  ...issuerSettings(),
  clientSecretsAllowed,
  clock: systemClock,
}));

const SOURCE_ADDRESS = '203.0.113.7';
const post = (body: string | null, headers: Record<string, string> = {}) =>
  handler(
    proxyEvent({
      body,
      headers,
      requestContext: { identity: { sourceIp: SOURCE_ADDRESS } } as APIGatewayProxyEvent['requestContext'],
    }),
    lambdaContext,
  );

const postJson = (body: unknown, headers: Record<string, string> = {}) =>
  post(JSON.stringify(body), { 'Content-Type': 'application/json', ...headers });

const postForm = (parameters: Record<string, string>, headers: Record<string, string> = {}) =>
  post(new URLSearchParams(parameters).toString(), {
    'content-type': 'application/x-www-form-urlencoded',
    ...headers,
  });

const jsonRequest = (overrides: Record<string, unknown> = {}) => ({
  grant_type: 'client_credentials',
  client_id: CLIENT.clientId,
  client_secret: CLIENT.secret,
  ...overrides,
});

const bodyOf = (result: { body: string }) => JSON.parse(result.body) as Record<string, unknown>;

beforeAll(() => {
  muteLogger();
  signer = testSigner();
});

beforeEach(async () => {
  store = await storeWithClient();
  throttle = new RecordingThrottle();
  clientSecretsAllowed = true;
});

describe('POST /oauth/token on a stage that refuses client secrets', () => {
  it('refuses a correct secret, Basic or in the body, before any secret is checked', async () => {
    clientSecretsAllowed = false;
    const inBody = await postJson(jsonRequest());
    const inBasic = await postForm(
      { grant_type: 'client_credentials' },
      { Authorization: basic(CLIENT.clientId, CLIENT.secret) },
    );

    for (const result of [inBody, inBasic]) {
      expect(result.statusCode).toBe(401);
      expect(bodyOf(result)).toMatchObject({ error: 'invalid_client' });
    }
    expect(throttle.checks).toEqual([]);
  });
});

describe('POST /oauth/token refuses an ambiguous request', () => {
  it('with two Authorization headers, as API Gateway hands them over, before any client is looked up', async () => {
    const body = new URLSearchParams({ grant_type: 'client_credentials' }).toString();
    const result = await handler(
      proxyEvent({
        body,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          Authorization: basic(CLIENT.clientId, CLIENT.secret),
        },
        multiValueHeaders: {
          'content-type': ['application/x-www-form-urlencoded'],
          Authorization: [
            basic(CLIENT.clientId, CLIENT.secret),
            basic('someone-else', 'another-secret-0123'),
          ],
        },
      }),
      lambdaContext,
    );

    expect(result.statusCode).toBe(400);
    expect(result.headers?.['Content-Type']).toBe('application/json');
    expect(bodyOf(result)).toMatchObject({ error: 'invalid_request', status: 400 });
  });
});

describe('POST /oauth/token issues a token', () => {
  it('for the JSON body of the spec', async () => {
    const result = await postJson(jsonRequest({ scope: 'transactions:read' }));

    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'transactions:read',
    });
    expect(result.headers).toMatchObject({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  });

  it('for a form body with client_secret_post', async () => {
    const result = await postForm(jsonRequest({ scope: 'transactions:write' }) as Record<string, string>);

    expect(result.statusCode).toBe(200);
    expect(bodyOf(result).scope).toBe('transactions:write');
  });

  it('for a form body with HTTP Basic credentials, form-urlencoded before base64', async () => {
    await registerClient(store, { ...CLIENT, clientId: 'odd.id~1', secret: 'p@ss word:+%/secret' });

    const result = await postForm(
      { grant_type: 'client_credentials' },
      { AUTHORIZATION: basic('odd.id~1', 'p@ss word:+%/secret') },
    );

    expect(result.statusCode).toBe(200);
  });

  it('accepts client_id in the body when it names the Basic client', async () => {
    const result = await postForm(
      { grant_type: 'client_credentials', client_id: CLIENT.clientId },
      { Authorization: basic(CLIENT.clientId, CLIENT.secret) },
    );

    expect(result.statusCode).toBe(200);
  });

  it('grants every allowed scope when none is requested', async () => {
    const result = await postJson(jsonRequest());

    expect(bodyOf(result).scope).toBe('transactions:read transactions:write');
  });

  it('treats an empty scope parameter as absent (RFC 6749 3.1)', async () => {
    const result = await postJson(jsonRequest({ scope: '' }));

    expect(bodyOf(result).scope).toBe('transactions:read transactions:write');
  });

  it('signs the claims the authorizer and handlers rely on', async () => {
    vi.useFakeTimers({ now: new Date('2031-05-06T07:08:09.500Z') });
    try {
      const result = await postJson(jsonRequest({ scope: 'transactions:write transactions:read' }));
      const { header, payload } = decodeJwt(bodyOf(result).access_token as string);
      const iat = Math.floor(Date.parse('2031-05-06T07:08:09Z') / 1000);

      expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: await signer.keyId() });
      expect((await signer.publicJwks()).keys.map((key) => key.kid)).toContain(header.kid);
      expect(payload).toEqual({
        iss: ISSUER,
        sub: CLIENT.clientId,
        aud: AUDIENCE,
        iat,
        exp: iat + 3600,
        jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
        scope: 'transactions:write transactions:read',
        tenant: CLIENT.tenant,
        client_id: CLIENT.clientId,
        client_generation: 0,
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives every token its own jti', async () => {
    const first = decodeJwt(bodyOf(await postJson(jsonRequest())).access_token as string);
    const second = decodeJwt(bodyOf(await postJson(jsonRequest())).access_token as string);

    expect(first.payload.jti).not.toBe(second.payload.jti);
  });
});

describe('POST /oauth/token refuses', () => {
  const expectError = (result: { statusCode: number; body: string }, status: number, error: string) => {
    expect(result.statusCode).toBe(status);
    expect(bodyOf(result)).toMatchObject({ error, error_description: expect.any(String), status });
  };

  it('a wrong secret with 401 invalid_client and a Basic challenge', async () => {
    const result = await postJson(jsonRequest({ client_secret: 'not-the-secret-at-all' }));

    expectError(result, 401, 'invalid_client');
    expect(result.headers).toMatchObject({
      'WWW-Authenticate': 'Basic realm="credit-transfers"',
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
    });
  });

  it('a wrong Basic secret with 401 invalid_client', async () => {
    const result = await postForm(
      { grant_type: 'client_credentials' },
      { Authorization: basic(CLIENT.clientId, 'x') },
    );

    expectError(result, 401, 'invalid_client');
  });

  it('an unknown client exactly as a wrong secret', async () => {
    const unknown = await postJson(jsonRequest({ client_id: 'nobody' }));
    const wrongSecret = await postJson(jsonRequest({ client_secret: 'not-the-secret-at-all' }));

    expectError(unknown, 401, 'invalid_client');
    expect(unknown.body).toBe(wrongSecret.body);
    expect(store.reads).toContain('nobody');
  });

  it('an unknown client past its address budget exactly as a wrong secret, and counts it failed', async () => {
    throttle.addressBudget = 0;
    const unknown = await postJson(jsonRequest({ client_id: 'nobody' }));
    const wrongSecret = await postJson(jsonRequest({ client_secret: 'not-the-secret-at-all' }));

    expectError(unknown, 401, 'invalid_client');
    expect(unknown.body).toBe(wrongSecret.body);
    expect(unknown.headers).toEqual(wrongSecret.headers);
    expect(throttle.failures.map((caller) => caller.clientId)).toEqual(['nobody', CLIENT.clientId]);
  });

  it("never a known client's correct secret for a spent address budget", async () => {
    throttle.addressBudget = 0;
    const result = await postJson(jsonRequest());

    expect(result.statusCode).toBe(200);
  });

  it('a request without credentials with 401 invalid_client', async () => {
    expectError(await postJson({ grant_type: 'client_credentials' }), 401, 'invalid_client');
  });

  it('an Authorization scheme other than Basic with 401 invalid_client', async () => {
    const result = await postForm(
      { grant_type: 'client_credentials' },
      { Authorization: 'Bearer abc.def.ghi' },
    );

    expectError(result, 401, 'invalid_client');
  });

  it('an unknown grant type with 400 unsupported_grant_type', async () => {
    expectError(await postJson(jsonRequest({ grant_type: 'password' })), 400, 'unsupported_grant_type');
  });

  it('a missing grant type with 400 invalid_request naming it', async () => {
    const result = await postJson(jsonRequest({ grant_type: undefined }));

    expectError(result, 400, 'invalid_request');
    expect(bodyOf(result).invalidParams).toEqual([{ name: 'grant_type', reason: 'is required' }]);
  });

  it('a scope the client may not be granted with 400 invalid_scope', async () => {
    expectError(
      await postJson(jsonRequest({ scope: 'transactions:read cards:write' })),
      400,
      'invalid_scope',
    );
  });

  it('an unknown scope with 400 invalid_scope', async () => {
    expectError(await postJson(jsonRequest({ scope: 'payments:everything' })), 400, 'invalid_scope');
  });

  it('credentials in both Basic and the body with 400 invalid_request', async () => {
    const result = await postForm(jsonRequest() as Record<string, string>, {
      Authorization: basic(CLIENT.clientId, CLIENT.secret),
    });

    expectError(result, 400, 'invalid_request');
  });

  it('a body client_id other than the Basic one with 400 invalid_request', async () => {
    const result = await postForm(
      { grant_type: 'client_credentials', client_id: 'someone-else' },
      { Authorization: basic(CLIENT.clientId, CLIENT.secret) },
    );

    expectError(result, 400, 'invalid_request');
  });

  it('a repeated form parameter with 400 invalid_request', async () => {
    const result = await post('grant_type=client_credentials&scope=a&scope=b', {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: basic(CLIENT.clientId, CLIENT.secret),
    });

    expectError(result, 400, 'invalid_request');
  });

  it('malformed JSON with 400 invalid_request', async () => {
    expectError(await post('{"grant_type":', { 'Content-Type': 'application/json' }), 400, 'invalid_request');
  });

  it('a JSON value that is not an object with 400 invalid_request', async () => {
    expectError(
      await post('["client_credentials"]', { 'Content-Type': 'application/json' }),
      400,
      'invalid_request',
    );
  });

  it('a non-string parameter with 400 invalid_request', async () => {
    const result = await postJson(jsonRequest({ scope: ['transactions:read'] }));

    expectError(result, 400, 'invalid_request');
    expect(bodyOf(result).invalidParams).toEqual([{ name: 'scope', reason: expect.any(String) }]);
  });

  it('another media type with 415 unsupported_media_type', async () => {
    expectError(
      await post('grant_type=client_credentials', { 'Content-Type': 'text/plain' }),
      415,
      'unsupported_media_type',
    );
  });

  it('a body over 64 KiB with 413 payload_too_large', async () => {
    const result = await postJson(jsonRequest({ scope: 'x'.repeat(64 * 1024) }));

    expectError(result, 413, 'payload_too_large');
  });
});

describe('POST /oauth/token throttles failed client authentication', () => {
  it('answers a throttled client id with 429 rate_limited, Retry-After and the token error body, before any secret is checked', async () => {
    throttle.refusal = { retryAfterSeconds: 42 };

    const result = await postJson(jsonRequest());

    expect(result.statusCode).toBe(429);
    expect(result.headers).toMatchObject({
      'Retry-After': '42',
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
    });
    expect(bodyOf(result)).toMatchObject({
      error: 'rate_limited',
      error_description: expect.stringContaining('42 seconds'),
      status: 429,
    });
    expect(store.reads).toEqual([]);
  });

  const from = (clientId: string) => ({ clientId, sourceAddress: SOURCE_ADDRESS });

  it('checks an unknown id as a known one, and counts a failure only once the secret is known to be wrong', async () => {
    await postJson(jsonRequest({ client_id: 'nobody' }));
    await postJson(jsonRequest({ client_secret: 'not-the-secret-at-all' }));
    await postJson(jsonRequest());

    expect(throttle.checks).toEqual([from('nobody'), from(CLIENT.clientId), from(CLIENT.clientId)]);
    expect(throttle.failures).toEqual([from('nobody'), from(CLIENT.clientId)]);
    // The correct secret gives its check's place back.
    expect(throttle.successes).toEqual([from(CLIENT.clientId)]);
  });

  it('starts the count again on a success after failures', async () => {
    throttle.counted = 3;

    expect((await postJson(jsonRequest())).statusCode).toBe(200);
    expect(throttle.failures).toEqual([]);
    expect(throttle.successes).toEqual([from(CLIENT.clientId)]);
  });

  it('counts a malformed client id by the id it sent', async () => {
    const result = await postJson(jsonRequest({ client_id: 'no#such id' }));

    expect(result.statusCode).toBe(401);
    expect(throttle.failures).toEqual([from('no#such id')]);
  });
});

describe('POST /oauth/token on a fault', () => {
  it('answers 500 internal_error without details when the store fails', async () => {
    store.get = async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.1:443');
    };

    const result = await postJson(jsonRequest());

    expect(result.statusCode).toBe(500);
    expect(bodyOf(result).error).toBe('internal_error');
    expect(result.body).not.toContain('ECONNREFUSED');
  });
});
