import { generateKeyPairSync } from 'node:crypto';
import type { APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAllowed } from '#adapters/access/route-policy';
import { privateKeySigner } from '#adapters/access/signer-local';
import { type AuthorizerDependencies, createAuthorizer } from '#auth/authorizer';
import type { ClientRecord } from '#domain/access/client';
import { withDisabled, withRotatedSecret } from '#domain/access/client';
import { signJwt } from '#domain/access/jwt';
import type { TokenKeys, TokenSigner } from '#domain/access/ports';
import { ROUTES, type Route } from '#routes';
import {
  AUDIENCE,
  authorizerSettings,
  CLIENT,
  type InMemoryClientStore,
  ISSUER,
  muteLogger,
  storeWithClient,
  testSigner,
} from './fakes.ts';

const STAGE_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/live';
const METHOD_ARN = `${STAGE_ARN}/GET/v1/payments/credit-transfers/pay-1/status`;

const TEST_ROUTES: Route[] = [
  { operationId: 'issueToken', method: 'POST', path: '/oauth/token', entry: 'x.ts', summary: '' },
  {
    operationId: 'list',
    method: 'GET',
    path: '/v1/payments/credit-transfers',
    entry: 'x.ts',
    scope: 'transactions:read',
    summary: '',
  },
  {
    operationId: 'initiate',
    method: 'POST',
    path: '/v1/payments/credit-transfers',
    entry: 'x.ts',
    scope: 'transactions:write',
    summary: '',
  },
  {
    operationId: 'status',
    method: 'GET',
    path: '/v1/payments/credit-transfers/{paymentId}/status',
    entry: 'x.ts',
    scope: 'transactions:read',
    summary: '',
  },
  {
    operationId: 'cancel',
    method: 'POST',
    path: '/v1/payments/credit-transfers/{paymentId}/cancellation',
    entry: 'x.ts',
    scope: 'transactions:write',
    summary: '',
  },
];

let signer: TokenSigner & TokenKeys;
let clients: InMemoryClientStore;
let authorize: ReturnType<typeof createAuthorizer>;
const dependencies = (routes: readonly Route[] = TEST_ROUTES): AuthorizerDependencies => ({
  keys: signer,
  clients,
  issuer: ISSUER,
  audience: AUDIENCE,
  routes,
  ...authorizerSettings(),
});

const nowSeconds = () => Math.floor(Date.now() / 1000);
const claims = (overrides: Record<string, unknown> = {}) => ({
  iss: ISSUER,
  sub: 'acme-payments',
  aud: AUDIENCE,
  iat: nowSeconds(),
  exp: nowSeconds() + 3600,
  jti: '1f0e4a3c-0000-4000-8000-000000000001',
  scope: 'transactions:read',
  tenant: 'acme',
  client_id: 'acme-payments',
  ...overrides,
});

const event = (authorizationToken: string, methodArn = METHOD_ARN): APIGatewayTokenAuthorizerEvent => ({
  type: 'TOKEN',
  authorizationToken,
  methodArn,
});

const bearer = async (overrides: Record<string, unknown> = {}, withSigner: TokenSigner = signer) =>
  `Bearer ${await signJwt(claims(overrides), withSigner)}`;

const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeEach(async () => {
  clients = await storeWithClient();
});

beforeAll(() => {
  muteLogger();
  signer = testSigner();
  authorize = createAuthorizer(() => dependencies());
});

describe('the authorizer accepts a valid token', () => {
  it('with principal and context from its claims', async () => {
    const result = await authorize(event(await bearer()));

    expect(result.principalId).toBe('acme-payments');
    // The token's jti goes with it, for the records of who decided what (approvals).
    expect(result.context).toEqual({
      tenant: 'acme',
      clientId: 'acme-payments',
      scope: 'transactions:read',
      tokenId: '1f0e4a3c-0000-4000-8000-000000000001',
    });
  });

  it("naming the tenant's API key as usageIdentifierKey: one per tenant, API and stage", async () => {
    const { createHash } = await import('node:crypto');
    const result = await authorize(event(await bearer()));
    // The documented derivation (docs/rate-limits.md), spelled out: the clients command creates this key.
    const expected = createHash('sha256').update('credit-transfers usage a1b2c3d4e5/live acme').digest('hex');
    expect(result.usageIdentifierKey).toBe(expected);
    expect(result.usageIdentifierKey).toMatch(/^[0-9a-f]{64}$/);

    const otherStage = await authorize(
      event(
        await bearer(),
        'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/test/GET/v1/payments/credit-transfers',
      ),
    );
    expect(otherStage.usageIdentifierKey).not.toBe(expected);
    const otherTenant = await clients.get('acme-payments');
    await clients.put({ ...(otherTenant as ClientRecord), tenant: 'globex' });
    const other = await authorize(event(await bearer({ tenant: 'globex' })));
    expect(other.usageIdentifierKey).not.toBe(expected);
  });

  it('allowing every protected route: the handler of each checks its scope and names it when missing', async () => {
    const granted = (await clients.get('acme-payments')) as ClientRecord;
    await clients.put({ ...granted, scopes: [...granted.scopes, 'cards:read'] });
    const result = await authorize(event(await bearer({ scope: 'transactions:read cards:read' })));

    expect(result.policyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 'execute-api:Invoke',
          Resource: [
            `${STAGE_ARN}/GET/v1/payments/credit-transfers`,
            `${STAGE_ARN}/POST/v1/payments/credit-transfers`,
            `${STAGE_ARN}/GET/v1/payments/credit-transfers/*/status`,
            `${STAGE_ARN}/POST/v1/payments/credit-transfers/*/cancellation`,
          ],
        },
      ],
    });
    expect(result.context.scope).toBe('transactions:read cards:read');
  });

  it('with one policy that decides every route, whichever route it was asked for', async () => {
    const result = await authorize(event(await bearer({ scope: 'transactions:write' })));
    const policy = result.policyDocument;

    expect(isAllowed(policy, `${STAGE_ARN}/POST/v1/payments/credit-transfers`)).toBe(true);
    expect(isAllowed(policy, `${STAGE_ARN}/POST/v1/payments/credit-transfers/pay-9/cancellation`)).toBe(true);
    expect(isAllowed(policy, `${STAGE_ARN}/GET/v1/payments/credit-transfers`)).toBe(true);
    expect(isAllowed(policy, `${STAGE_ARN}/POST/oauth/token`)).toBe(false);
  });

  it('naming every protected route of the real route table exactly once', async () => {
    const realAuthorizer = createAuthorizer(() => dependencies(ROUTES));
    const statements = (await realAuthorizer(event(await bearer()))).policyDocument.Statement;
    const named = statements.flatMap((statement) =>
      'Resource' in statement ? [statement.Resource].flat() : [],
    );
    const protectedRoutes = ROUTES.filter((route) => route.scope !== undefined);

    expect(named).toHaveLength(protectedRoutes.length);
    expect(new Set(named).size).toBe(protectedRoutes.length);
  });

  it('whatever the case of the Bearer scheme', async () => {
    const token = (await bearer()).replace('Bearer', 'bearer');

    await expect(authorize(event(token))).resolves.toMatchObject({ principalId: 'acme-payments' });
  });
});

describe('the authorizer answers Unauthorized for', () => {
  const rejects = async (authorizationToken: string) =>
    expect(authorize(event(authorizationToken))).rejects.toThrow(/^Unauthorized$/);

  it('alg none', async () => {
    const kid = await signer.keyId();
    const unsigned = `${segment({ alg: 'none', typ: 'JWT', kid })}.${segment(claims())}.`;
    await rejects(`Bearer ${unsigned}`);
    await rejects(`Bearer ${unsigned}c2ln`);
  });

  it('HS256 signed with the public key as secret', async () => {
    const { createHmac } = await import('node:crypto');
    const jwk = (await signer.publicJwks()).keys[0];
    const input = `${segment({ alg: 'HS256', typ: 'JWT', kid: jwk?.kid })}.${segment(claims())}`;
    const mac = createHmac('sha256', JSON.stringify(jwk)).update(input).digest('base64url');
    await rejects(`Bearer ${input}.${mac}`);
  });

  it('a signature by another key under the same kid', async () => {
    const impostor = privateKeySigner(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    const kid = await signer.keyId();
    const forged: TokenSigner = { ...impostor, keyId: async () => kid };
    await rejects(await bearer({}, forged));
  });

  it('a payload changed after signing', async () => {
    const [header, , signature] = (await bearer()).slice('Bearer '.length).split('.');
    await rejects(`Bearer ${header}.${segment(claims({ scope: 'transactions:write' }))}.${signature}`);
  });

  it('an expired token', async () => {
    await rejects(await bearer({ iat: nowSeconds() - 7200, exp: nowSeconds() - 3600 }));
  });

  it('a token without exp', async () => {
    await rejects(await bearer({ exp: undefined }));
  });

  it('another issuer', async () => {
    await rejects(await bearer({ iss: 'https://login.example.com' }));
  });

  it('another audience', async () => {
    await rejects(await bearer({ aud: 'another-api' }));
  });

  it('a token without tenant', async () => {
    await rejects(await bearer({ tenant: undefined }));
  });

  it('a tenant that could forge a key prefix', async () => {
    await rejects(await bearer({ tenant: 'acme#CT#x' }));
  });

  it('a token without sub', async () => {
    await rejects(await bearer({ sub: undefined }));
  });

  it('an unknown kid', async () => {
    await rejects(await bearer({}, { ...signer, keyId: async () => 'another-key' }));
  });

  it('a token issued a day ahead', async () => {
    await rejects(await bearer({ iat: nowSeconds() + 86_400, exp: nowSeconds() + 86_400 + 3600 }));
  });

  it('a token that lives ten years', async () => {
    await rejects(await bearer({ exp: nowSeconds() + 10 * 365 * 86_400 }));
  });

  it('a token without iat', async () => {
    await rejects(await bearer({ iat: undefined }));
  });

  it('a token naming a critical header this service does not understand', async () => {
    const input = `${segment({ alg: 'RS256', typ: 'JWT', kid: await signer.keyId(), crit: ['exp-policy'], 'exp-policy': 1 })}.${segment(claims())}`;
    const signature = (await signer.sign(Buffer.from(input))).toString('base64url');
    await rejects(`Bearer ${input}.${signature}`);
  });

  it('a scope the client is no longer granted, once its grant was narrowed', async () => {
    const token = await bearer({ scope: 'transactions:read transactions:write' });
    await expect(authorize(event(token))).resolves.toBeDefined();
    const client = (await clients.get('acme-payments')) as ClientRecord;
    await clients.put({ ...client, scopes: client.scopes.filter((scope) => scope !== 'transactions:write') });
    await rejects(token);
  });

  it('a header that is not Bearer <JWT>', async () => {
    const token = (await bearer()).slice('Bearer '.length);
    await rejects(token);
    await rejects(`Basic ${token}`);
    await rejects('Bearer ');
    await rejects('Bearer not-a-jwt');
    await rejects('');
  });
});

describe('the authorizer on a fault', () => {
  it('fails with an error other than Unauthorized when the key set cannot be read (API Gateway answers 500)', async () => {
    const broken = createAuthorizer(() => ({
      ...dependencies(),
      keys: { ...signer, publicJwks: async () => Promise.reject(new Error('KMS unavailable')) },
    }));

    await expect(broken(event(await bearer()))).rejects.toThrow('KMS unavailable');
  });

  it('fails with an error other than Unauthorized when the client cannot be read (API Gateway answers 500)', async () => {
    const broken = createAuthorizer(() => ({
      ...dependencies(),
      clients: { get: async () => Promise.reject(new Error('table unavailable')) },
    }));

    await expect(broken(event(await bearer()))).rejects.toThrow('table unavailable');
  });
});

describe('the authorizer verifies by kid against every key of the key set', () => {
  const previous = privateKeySigner(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
  const both: TokenKeys = {
    signingKey: async () => signer,
    publicJwks: async () => ({
      keys: [...(await signer.publicJwks()).keys, ...(await previous.publicJwks()).keys],
    }),
  };

  it('accepts a token of the previous key while the key set publishes it, and refuses it once it does not', async () => {
    const rotated = createAuthorizer(() => ({ ...dependencies(), keys: both }));
    const byPrevious = await bearer({}, previous);

    await expect(rotated(event(byPrevious))).resolves.toMatchObject({ principalId: CLIENT.clientId });
    await expect(rotated(event(await bearer()))).resolves.toMatchObject({ principalId: CLIENT.clientId });
    // The key set without it: retired.
    await expect(authorize(event(byPrevious))).rejects.toThrow(/^Unauthorized$/);
  });
});

describe('the authorizer during a move from RS256 to ES256', () => {
  const es256 = privateKeySigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const both: TokenKeys = {
    signingKey: async () => es256,
    publicJwks: async () => ({
      keys: [...(await es256.publicJwks()).keys, ...(await signer.publicJwks()).keys],
    }),
  };

  it('accepts ES256 tokens of the new key and RS256 tokens of the old one', async () => {
    const moving = createAuthorizer(() => ({ ...dependencies(), keys: both }));
    const newToken = await bearer({}, es256);

    expect(
      JSON.parse(Buffer.from(newToken.split(' ')[1]?.split('.')[0] ?? '', 'base64url').toString()),
    ).toMatchObject({
      alg: 'ES256',
    });
    await expect(moving(event(newToken))).resolves.toMatchObject({ principalId: CLIENT.clientId });
    await expect(moving(event(await bearer()))).resolves.toMatchObject({ principalId: CLIENT.clientId });
  });

  it('refuses a token whose alg is not the one its key signs with', async () => {
    const moving = createAuthorizer(() => ({ ...dependencies(), keys: both }));
    const [, payload, signature] = (await bearer({}, es256)).split(' ')[1]?.split('.') ?? [];
    const relabelled = `${segment({ alg: 'RS256', typ: 'JWT', kid: await es256.keyId() })}.${payload}.${signature}`;

    await expect(moving(event(`Bearer ${relabelled}`))).rejects.toThrow(/^Unauthorized$/);
  });
});

describe('the authorizer refuses the tokens of a client that can no longer have them', () => {
  const rejects = async (authorizationToken: string) =>
    expect(authorize(event(authorizationToken))).rejects.toThrow(/^Unauthorized$/);
  const stored = async () =>
    (await clients.get(CLIENT.clientId)) as NonNullable<Awaited<ReturnType<InMemoryClientStore['get']>>>;

  it('accepts a token of the current generation, and one issued before generations (none: 0)', async () => {
    await expect(authorize(event(await bearer({ client_generation: 0 })))).resolves.toBeDefined();
    await expect(authorize(event(await bearer()))).resolves.toBeDefined();
    expect(clients.reads).toContain(CLIENT.clientId);
  });

  it('a disabled client', async () => {
    const token = await bearer({ client_generation: 0 });
    await clients.put({ ...(await stored()), disabledAt: new Date().toISOString() });
    await rejects(token);
  });

  it('a client disabled through administration (its generation moved on too)', async () => {
    const token = await bearer({ client_generation: 0 });
    await clients.put(withDisabled(await stored(), new Date()));
    await rejects(token);
  });

  it('a client whose secret was rotated without grace, but not with grace', async () => {
    const token = await bearer({ client_generation: 0 });
    await clients.put(withRotatedSecret(await stored(), 'scrypt$x', 3600, new Date()));
    await expect(authorize(event(token))).resolves.toBeDefined();

    await clients.put(withRotatedSecret(await stored(), 'scrypt$y', 0, new Date()));
    await rejects(token);
    await expect(authorize(event(await bearer({ client_generation: 1 })))).resolves.toBeDefined();
  });

  it('a client that no longer exists, or belongs to another tenant now', async () => {
    await rejects(await bearer({ sub: 'no-such-client', client_id: 'no-such-client' }));
    const token = await bearer();
    await clients.put({ ...(await stored()), tenant: 'another' });
    await rejects(token);
  });

  it('a generation that is not a whole number', async () => {
    await rejects(await bearer({ client_generation: '0' }));
    await rejects(await bearer({ client_generation: 0.5 }));
  });
});
