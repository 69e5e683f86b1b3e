import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbAuthenticationThrottle } from '#adapters/authentication-throttle';
import { createDocumentClient, type DocumentClient } from '#adapters/dynamodb-client';
import { authenticationFailuresKey } from '#adapters/keys';
import { createTableInput } from '#adapters/table-definition';
import { AUTHENTICATION_THROTTLE, authenticationThrottlePolicy } from '#domain/client';
import type { AuthenticationThrottle } from '#domain/ports';
import { createDynamoDbClient } from '#local/table';

/** The adapter's conditional updates against dynalite (in memory, no TTL), with the clock handed in. */
const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => import('node:net').Server;
const TABLE = 'throttle-unit';

let server: import('node:net').Server;
let documents: DocumentClient;
let throttle: AuthenticationThrottle;
let idCounter = 0;
const freshId = () => `client-${++idCounter}`;

const T0 = new Date('2031-05-06T07:08:09.250Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

const fail = async (clientId: string, times: number, when = T0) => {
  for (let attempt = 0; attempt < times; attempt++) {
    expect(await throttle.attempt(clientId, when)).toEqual({ allowed: true });
  }
};

beforeAll(async () => {
  server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await createDynamoDbClient(endpoint).send(new CreateTableCommand(createTableInput(TABLE)));
  documents = createDocumentClient(endpoint);
  throttle = new DynamoDbAuthenticationThrottle(documents, TABLE, AUTHENTICATION_THROTTLE);
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe('failed client authentication throttle', () => {
  it('lets 10 failures in a row through and refuses the 11th until the window ends, at most 60 s', async () => {
    const clientId = freshId();
    await fail(clientId, 10);

    const refused = await throttle.attempt(clientId, at(15));

    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 45 });
  });

  it('never asks for more than 60 seconds, and lets the id try again once that time has passed', async () => {
    const clientId = freshId();
    await fail(clientId, 10);

    const refused = await throttle.attempt(clientId, T0);
    expect(refused.allowed).toBe(false);
    const wait = (refused as { retryAfterSeconds: number }).retryAfterSeconds;
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);

    expect((await throttle.attempt(clientId, at(wait - 1))).allowed).toBe(false);
    expect(await throttle.attempt(clientId, at(wait))).toEqual({ allowed: true });
  });

  it('treats an ended window as absent although its item was never deleted (dynalite has no TTL)', async () => {
    const clientId = freshId();
    await fail(clientId, 10);
    const later = at(61);

    await fail(clientId, 10, later);

    expect((await throttle.attempt(clientId, later)).allowed).toBe(false);
  });

  it('keeps the count in an item whose expiresAt (epoch seconds, for DynamoDB TTL) ends the window', async () => {
    const clientId = freshId();
    await fail(clientId, 1);

    const { Item } = await documents.get({ TableName: TABLE, Key: authenticationFailuresKey(clientId) });

    expect(Item).toMatchObject({ failures: 1, expiresAt: Math.floor(T0.getTime() / 1000) + 60 });
  });

  it('starts the count again after a success', async () => {
    const clientId = freshId();
    await fail(clientId, 9);

    await throttle.succeeded(clientId);

    await fail(clientId, 10);
    expect((await throttle.attempt(clientId, T0)).allowed).toBe(false);
  });

  it('does not let a refused attempt extend the lock', async () => {
    const clientId = freshId();
    await fail(clientId, 10);
    for (let second = 1; second < 60; second += 7) {
      expect((await throttle.attempt(clientId, at(second))).allowed).toBe(false);
    }

    expect((await throttle.attempt(clientId, at(60))).allowed).toBe(true);
  });

  it('lets no more than 10 of many parallel attempts through', async () => {
    const clientId = freshId();

    const results = await Promise.all(Array.from({ length: 25 }, () => throttle.attempt(clientId, T0)));

    expect(results.filter((result) => result.allowed)).toHaveLength(10);
  });

  it('counts each id on its own', async () => {
    const locked = freshId();
    await fail(locked, 10);

    expect((await throttle.attempt(freshId(), T0)).allowed).toBe(true);
  });

  it('throttles an id no client can have by the id it sent, under a bounded key', async () => {
    const hostile = `x#CLIENT#${'y'.repeat(5000)}`;
    await fail(hostile, 10);

    expect((await throttle.attempt(hostile, T0)).allowed).toBe(false);
    expect(authenticationFailuresKey(hostile).pk.length).toBeLessThan(64);
    expect(authenticationFailuresKey(hostile).pk).not.toBe(authenticationFailuresKey('x').pk);
  });

  it('can have its window shortened for the local runtime, never lengthened', async () => {
    const short = new DynamoDbAuthenticationThrottle(documents, TABLE, authenticationThrottlePolicy('2'));
    const clientId = freshId();
    for (let attempt = 0; attempt < 10; attempt++) await short.attempt(clientId, T0);

    expect(await short.attempt(clientId, at(1))).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect((await short.attempt(clientId, at(2))).allowed).toBe(true);
    for (const setting of ['0', '61', '3600', '1.5', '-1', 'sixty', ''.padEnd(3, ' ')]) {
      expect(() => authenticationThrottlePolicy(setting)).toThrow(/CLIENT_AUTH_THROTTLE_WINDOW_SECONDS/);
    }
  });
});
