import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTableInput } from '#adapters/table/table-definition';
import { ATTEMPT_TIMEOUT_MS } from '#domain/webhooks/webhook-schedule';
import { createDynamoDbClient } from '#local/table';
import { lookingEndsAt } from '../../../lambdas/webhooks/deliver-due-webhooks.ts';

/** The minute poller stops looking at the queue in time to let its last attempts end inside the invocation. */
describe('deliverDueWebhooks run length', () => {
  const now = 1_000_000;

  it('looks for 50 s when its invocation has the time', () => {
    expect(lookingEndsAt(now, now + 75_000)).toBe(now + 50_000);
    expect(lookingEndsAt(now, undefined)).toBe(now + 50_000);
  });

  it('stops sooner under a shorter timeout, leaving an attempt its whole time limit', () => {
    const ends = lookingEndsAt(now, now + 30_000);
    expect(ends).toBeLessThan(now + 30_000 - ATTEMPT_TIMEOUT_MS);
    expect(ends).toBeGreaterThan(now);
  });

  it('does not look at all when the invocation has less left than an attempt needs', () => {
    expect(lookingEndsAt(now, now + ATTEMPT_TIMEOUT_MS)).toBeLessThanOrEqual(now);
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
