import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { CreditTransfersClient } from '../../client/src/index.ts';
import { runCli } from '../client/cli-process.ts';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { runScript } from './support/scripts.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * The SDK and the CLI with a private key (private_key_jwt) and DPoP-bound tokens, against the
 * local runtime with DPoP server nonces on: the SDK follows `use_dpop_nonce` by itself.
 */
const service = useLocalService({ env: { DPOP_NONCE_SECRET: 'a-local-nonce-secret-0123456789abcdef' } });

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const kid = `sdk-${randomUUID()}`;
const clientId = `sdk-keys-${randomUUID().slice(0, 8)}`;
let keyFile: string;

beforeAll(async () => {
  const jwks = join(service.dataDir, `${kid}.jwks.json`);
  await writeFile(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid } satisfies JWK] }));
  keyFile = join(service.dataDir, `${kid}.pem`);
  await writeFile(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const created = await runScript(
    service,
    'clients',
    'create',
    '--client-id',
    clientId,
    '--tenant',
    'sdk-keys',
    '--scope',
    'transactions:read transactions:write',
    '--jwks',
    jwks,
  );
  expect(created.code, created.stderr).toBe(0);
});

/** The SDK, counting what it sends to the token endpoint and how it was answered. */
const sdk = (options: { dpop?: true }) => {
  const tokenAnswers: number[] = [];
  const client = new CreditTransfersClient({
    baseUrl: service.baseUrl,
    clientId,
    privateKeyJwt: { key: privateKey, kid },
    ...options,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (String(input).endsWith('/oauth/token')) tokenAnswers.push(response.status);
      return response;
    },
  });
  return { client, tokenAnswers };
};

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { cnf?: { jkt: string } };

describe('the SDK with privateKeyJwt', () => {
  it('obtains a bearer token with a signed assertion, and calls the API with it', async () => {
    const { client } = sdk({});
    const token = await client.tokens.tokenResponse();
    expect(token.token_type).toBe('Bearer');
    expect(claimsOf(token.access_token).cnf).toBeUndefined();
    const page = await client.listPage({}, { limit: 1 });
    expect(page.items).toEqual(expect.any(Array));
  });

  it('with dpop: true binds the token to a key of its own, following the server nonce, and every call proves it', async () => {
    const { client, tokenAnswers } = sdk({ dpop: true });
    const token = await client.tokens.tokenResponse();
    expect(token.token_type).toBe('DPoP');
    // The first proof had no nonce: refused with use_dpop_nonce, then sent again with it.
    expect(tokenAnswers).toEqual([400, 200]);
    const thumbprint = await client.tokens.dpop?.thumbprint();
    expect(claimsOf(token.access_token).cnf?.jkt).toBe(thumbprint);

    const accepted = await client.initiate(minimalCreditTransfer());
    const status = await client.status(accepted.paymentId);
    expect(status.modified && status.report.paymentId).toBe(accepted.paymentId);
    expect((await client.listPage({}, { limit: 5 })).items.length).toBeGreaterThan(0);
    // Each call made its own proof: the service refuses a proof's jti the second time.
    const again = await client.status(accepted.paymentId);
    expect(again.modified && again.report.paymentId).toBe(accepted.paymentId);
    expect(client.tokens.issued).toBe(1);
  });

  it('after a 401 on a bound token, obtains a new token and tries once more with a new proof', async () => {
    let spoiled = 0;
    const client = new CreditTransfersClient({
      baseUrl: service.baseUrl,
      clientId,
      privateKeyJwt: { key: privateKey, kid },
      dpop: true,
      // The first API call loses its proof on the way: the service answers 401.
      fetch: async (input, init) => {
        if (!String(input).endsWith('/oauth/token') && spoiled === 0) {
          spoiled++;
          const headers = new Headers(init?.headers);
          headers.delete('DPoP');
          const refused = await fetch(input, { ...init, headers });
          expect(refused.status).toBe(401);
          return refused;
        }
        return fetch(input, init);
      },
    });
    expect((await client.listPage({}, { limit: 1 })).items).toEqual(expect.any(Array));
    expect(spoiled).toBe(1);
    expect(client.tokens.issued).toBe(2);
  });

  it('another instance makes another key pair: tokens are never bound to a shared key', async () => {
    const first = sdk({ dpop: true }).client;
    const second = sdk({ dpop: true }).client;
    expect(await first.tokens.dpop?.thumbprint()).not.toBe(await second.tokens.dpop?.thumbprint());
    expect(claimsOf((await second.tokens.tokenResponse()).access_token).cnf?.jkt).toBe(
      await second.tokens.dpop?.thumbprint(),
    );
    // Never the client's authentication key.
    expect(await second.tokens.dpop?.thumbprint()).not.toBe(
      await calculateJwkThumbprint(await exportJWK(publicKey)),
    );
  });
});

describe('the CLI with --private-key and --dpop', () => {
  it('lists with a key file, bound by DPoP', async () => {
    const env = {
      CREDIT_TRANSFERS_API_URL: service.baseUrl,
      CREDIT_TRANSFERS_CLIENT_ID: clientId,
    };
    const listed = await runCli(
      ['--private-key', keyFile, '--kid', kid, '--dpop', 'list', '--limit', '1', '--format', 'json'],
      env,
    );
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual(expect.any(Object));

    const token = await runCli(
      ['--private-key', keyFile, '--kid', kid, '--dpop', 'token', '--format', 'json'],
      env,
    );
    expect(token.code, token.stderr).toBe(0);
    expect(JSON.parse(token.stdout)).toMatchObject({ token_type: 'DPoP' });

    const noKid = await runCli(['--private-key', keyFile, 'list'], env);
    expect(noKid.code).not.toBe(0);
    expect(noKid.stderr).toContain('--kid');
  });
});
