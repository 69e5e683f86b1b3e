import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTableInput } from '#adapters/table/table-definition';
import { delaySecondsUntil, MAX_DELAY_SECONDS } from '#adapters/webhooks/delivery-waker';
import { ATTEMPT_TIMEOUT_MS } from '#domain/webhooks/webhook-schedule';
import { createDynamoDbClient } from '#local/table';
import { startingEndsAt } from '../../../lambdas/webhooks/deliver-due-webhooks.ts';

/** A run stops starting attempts in time to let the last ones end inside the invocation. */
describe('deliverDueWebhooks run length', () => {
  const now = 1_000_000;

  it('leaves an attempt its whole time limit before the invocation ends', () => {
    expect(startingEndsAt(now + 30_000)).toBeLessThan(now + 30_000 - ATTEMPT_TIMEOUT_MS);
    expect(startingEndsAt(undefined)).toBe(Number.POSITIVE_INFINITY);
  });
});

/** A wake-up is held back until its retry is due, or as long as SQS allows and then sent on. */
describe('wake-up delay', () => {
  const now = new Date('2026-03-02T10:00:00.000Z');
  const inMs = (ms: number) => new Date(now.getTime() + ms);

  it('is the whole seconds until the retry is due, none for one already due', () => {
    expect(delaySecondsUntil(inMs(5_000), now)).toBe(5);
    expect(delaySecondsUntil(inMs(5_200), now)).toBe(6);
    expect(delaySecondsUntil(inMs(-1_000), now)).toBe(0);
  });

  it('is at most 15 minutes, however far off the retry is', () => {
    expect(delaySecondsUntil(inMs(10 * 3600_000), now)).toBe(MAX_DELAY_SECONDS);
    expect(MAX_DELAY_SECONDS).toBe(900);
  });
});

/** The handler as Lambda invokes it, over an empty queue in a real (in-memory) table. */
describe('deliverDueWebhooks under a short timeout', () => {
  const require = createRequire(import.meta.url);
  const dynalite = require('dynalite') as (options: object) => Server;
  const TABLE = 'deliver-due-unit';
  let server: Server;

  beforeAll(async () => {
    server = dynalite({ createTableMs: 0 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await createDynamoDbClient(endpoint).send(new CreateTableCommand(createTableInput(TABLE)));
    vi.stubEnv('DYNAMODB_ENDPOINT', endpoint);
    vi.stubEnv('TABLE_NAME', TABLE);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('answers before its invocation ends, where a fixed 50 s run would outlive it', async () => {
    const { handler } = await import('../../../lambdas/webhooks/deliver-due-webhooks.ts');
    const remainingMs = ATTEMPT_TIMEOUT_MS + 4_000;
    const started = Date.now();

    const result = await handler({}, { awsRequestId: 'poll', getRemainingTimeInMillis: () => remainingMs });

    expect(result).toEqual({ attempts: 0 });
    expect(Date.now() - started).toBeLessThan(remainingMs);
  }, 30_000);
});
