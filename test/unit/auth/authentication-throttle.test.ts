import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbAuthenticationThrottle } from '#adapters/access/authentication-throttle';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import { authenticationFailuresKey, clientKey } from '#adapters/table/keys';
import { createTableInput } from '#adapters/table/table-definition';
import { AUTHENTICATION_THROTTLE, authenticationThrottlePolicy } from '#domain/access/client';
import type { AuthenticationCaller, AuthenticationThrottle } from '#domain/access/ports';
import { createDynamoDbClient } from '#local/table';

/** The adapter's conditional updates against dynalite (in memory, no TTL), with the clock handed in. */
const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => import('node:net').Server;
const TABLE = 'throttle-unit';

let server: import('node:net').Server;
let documents: DocumentClient;
let throttle: AuthenticationThrottle;
let idCounter = 0;
const ADDRESS = '203.0.113.7';
/** A client id of its own per test, from ADDRESS unless another is given. */
const freshCaller = (sourceAddress = ADDRESS): AuthenticationCaller => ({
  clientId: `client-${++idCounter}`,
  sourceAddress,
});

const T0 = new Date('2031-05-06T07:08:09.250Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

const fail = async (caller: AuthenticationCaller, times: number, when = T0) => {
  for (let attempt = 0; attempt < times; attempt++) {
    expect((await throttle.check(caller, when)).allowed).toBe(true);
    await throttle.failed(caller, when);
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
    const caller = freshCaller();
    await fail(caller, 10);

    const refused = await throttle.check(caller, at(15));

    expect(refused).toMatchObject({ allowed: false, failures: 10, retryAfterSeconds: 45 });
  });

  it('never asks for more than 60 seconds, and lets the caller try again once that time has passed', async () => {
    const caller = freshCaller();
    await fail(caller, 10);

    const refused = await throttle.check(caller, T0);
    expect(refused.allowed).toBe(false);
    const wait = (refused as { retryAfterSeconds: number }).retryAfterSeconds;
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);

    expect((await throttle.check(caller, at(wait - 1))).allowed).toBe(false);
    expect(await throttle.check(caller, at(wait))).toMatchObject({ allowed: true, failures: 0 });
  });

  it('treats an ended window as absent although its item was never deleted (dynalite has no TTL)', async () => {
    const caller = freshCaller();
    await fail(caller, 10);
    const later = at(61);

    await fail(caller, 10, later);

    expect((await throttle.check(caller, later)).allowed).toBe(false);
  });

  it('keeps the count in an item whose expiresAt (epoch seconds, for DynamoDB TTL) ends the window', async () => {
    const caller = freshCaller();
    await fail(caller, 1);

    const { Item } = await documents.get({ TableName: TABLE, Key: authenticationFailuresKey(caller) });

    expect(Item).toMatchObject({ failures: 1, expiresAt: Math.floor(T0.getTime() / 1000) + 60 });
  });

  it('starts the count again after a success', async () => {
    const caller = freshCaller();
    await fail(caller, 9);

    const genuine = await throttle.check(caller, T0);
    expect(genuine).toMatchObject({ allowed: true, failures: 9 });
    await throttle.succeeded(caller, genuine);

    await fail(caller, 10);
    expect((await throttle.check(caller, T0)).allowed).toBe(false);
  });

  it('does not let a refused attempt extend the lock', async () => {
    const caller = freshCaller();
    await fail(caller, 10);
    for (let second = 1; second < 60; second += 7) {
      expect((await throttle.check(caller, at(second))).allowed).toBe(false);
    }

    expect((await throttle.check(caller, at(60))).allowed).toBe(true);
  });

  it('lets any number of correct secrets in flight through: each waits for a place another gives back', async () => {
    const caller = freshCaller();

    const checks = await Promise.all(
      Array.from({ length: 25 }, async () => {
        const check = await throttle.check(caller, T0);
        if (check.allowed) await throttle.succeeded(caller, check);
        return check;
      }),
    );

    expect(checks.every((check) => check.allowed)).toBe(true);
    expect(await throttle.check(caller, T0)).toMatchObject({ allowed: true, failures: 0 });
  });

  it('claims each check before the secret is checked: 20 wrong secrets at once get 10 checks, then 429', async () => {
    const caller = freshCaller();
    let checked = 0;

    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const check = await throttle.check(caller, T0);
        if (!check.allowed) return 429;
        checked++;
        // The derivation: a moment in which the other requests arrive.
        await new Promise((resolve) => setTimeout(resolve, 20));
        await throttle.failed(caller, T0);
        return 401;
      }),
    );

    expect(checked).toBe(AUTHENTICATION_THROTTLE.maxFailures);
    expect(answers.filter((status) => status === 429)).toHaveLength(20 - AUTHENTICATION_THROTTLE.maxFailures);
  });

  it('loses no failure when many are counted at once', async () => {
    const caller = freshCaller();

    await Promise.all(Array.from({ length: 12 }, () => throttle.failed(caller, T0)));

    expect(await throttle.check(caller, T0)).toMatchObject({ allowed: false, failures: 12 });
  });

  it('counts each client id on its own', async () => {
    const locked = freshCaller();
    await fail(locked, 10);

    expect((await throttle.check(freshCaller(), T0)).allowed).toBe(true);
  });

  it('counts each source address of one client id on its own', async () => {
    const attacker = freshCaller('198.51.100.66');
    const genuine = { ...attacker, sourceAddress: '2001:db8::17' };
    await fail(attacker, 10);

    expect((await throttle.check(attacker, T0)).allowed).toBe(false);
    expect(await throttle.check(genuine, T0)).toMatchObject({ allowed: true, failures: 0 });
  });

  it('keeps the counts apart from the client record, under keys nothing sent can stretch or forge', async () => {
    const hostile = {
      clientId: `x#CLIENT#${'y'.repeat(5000)}`,
      sourceAddress: `1.2.3.4#${'z'.repeat(5000)}`,
    };
    await fail(hostile, 10);

    expect((await throttle.check(hostile, T0)).allowed).toBe(false);
    const key = authenticationFailuresKey(hostile);
    expect(key.pk.length + key.sk.length).toBeLessThan(140);
    expect(key.pk).not.toBe(authenticationFailuresKey({ ...hostile, clientId: 'x' }).pk);
    expect(key.sk).not.toBe(authenticationFailuresKey({ ...hostile, sourceAddress: '1.2.3.4' }).sk);
    expect(authenticationFailuresKey({ clientId: 'acme', sourceAddress: ADDRESS }).pk).not.toBe(
      clientKey('acme').pk,
    );
  });

  it('can have its window shortened for the local runtime, never lengthened', async () => {
    const short = new DynamoDbAuthenticationThrottle(documents, TABLE, authenticationThrottlePolicy('2'));
    const caller = freshCaller();
    for (let attempt = 0; attempt < 10; attempt++) await short.failed(caller, T0);

    expect(await short.check(caller, at(1))).toMatchObject({
      allowed: false,
      failures: 10,
      retryAfterSeconds: 1,
    });
    expect((await short.check(caller, at(2))).allowed).toBe(true);
    for (const setting of ['0', '61', '3600', '1.5', '-1', 'sixty', ''.padEnd(3, ' ')]) {
      expect(() => authenticationThrottlePolicy(setting)).toThrow(/CLIENT_AUTH_THROTTLE_WINDOW_SECONDS/);
    }
  });
});
