import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import { webhookEndpointAllocationKey, webhookEndpointKey } from '#adapters/table/keys';
import { createTableInput } from '#adapters/table/table-definition';
import { EnvelopeSecrets, LocalDataKeys } from '#adapters/webhooks/secret-envelope';
import { DynamoDbWebhookStore } from '#adapters/webhooks/webhook-store';
import { systemClock } from '#domain/commons/ports';
import type { WebhookEndpointStore } from '#domain/webhooks/ports';
import { MAX_ENDPOINTS_PER_TENANT, openLiveSecrets } from '#domain/webhooks/webhook-endpoint';
import {
  createWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  type WebhookEndpointDependencies,
} from '#domain/webhooks/webhook-endpoints';
import { createDynamoDbClient } from '#local/table';

const sealer = new EnvelopeSecrets(new LocalDataKeys(randomBytes(32).toString('base64url')));

/**
 * Webhook endpoint changes that race, over the real table adapter (dynalite in memory): every
 * change is a conditional write, so a concurrent one is never lost and no limit is passed.
 */
const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => Server;
const TABLE = 'endpoints-unit';

let server: Server;
let store: DynamoDbWebhookStore;
let raw: DocumentClient;
const key = randomBytes(32);

beforeAll(async () => {
  server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await createDynamoDbClient(endpoint).send(new CreateTableCommand(createTableInput(TABLE)));
  raw = createDocumentClient(endpoint);
  store = new DynamoDbWebhookStore(raw, TABLE);
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

const deps = (
  endpoints: WebhookEndpointStore = store.endpoints,
): WebhookEndpointDependencies & { sealer: EnvelopeSecrets } => ({
  endpoints,
  events: store,
  deliveries: store,
  resolve: async () => ['93.184.215.14'],
  urlPolicy: { allowLocalReceivers: false },
  clock: systemClock,
  sealer,
});

const register = (tenant: string, endpoints?: WebhookEndpointStore) =>
  createWebhookEndpoint(deps(endpoints), tenant, { url: 'https://hooks.example.com/payments' });

/** The endpoints, with each read of `id` held until `readers` reads have been made (or `then` ran). */
const readsMeetingAt = (
  readers: number,
  then: () => Promise<void> = async () => {},
): WebhookEndpointStore => {
  let waiting = 0;
  let release: () => void = () => {};
  const met = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    ...store.endpoints,
    get: async (tenant, id) => {
      const read = await store.endpoints.get(tenant, id);
      if (++waiting === readers) {
        await then();
        release();
      }
      await met;
      return read;
    },
  };
};

describe('webhook endpoint changes that race', () => {
  it('two secret rotations that read the same endpoint: both secrets handed out are kept', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const { id } = await register(tenant);
    const meeting = readsMeetingAt(2);
    const [first, second] = await Promise.all([
      rotateWebhookSecret({ endpoints: meeting, clock: systemClock, sealer }, tenant, id),
      rotateWebhookSecret({ endpoints: meeting, clock: systemClock, sealer }, tenant, id),
    ]);
    const stored = await store.endpoints.get(tenant, id);
    if (stored === undefined) throw new Error('the endpoint is gone');
    // Kept sealed: opened as the signing functions open them.
    const secrets = await openLiveSecrets(sealer, stored, new Date());
    expect(secrets).toContain(first.secret);
    expect(secrets).toContain(second.secret);
  });

  it('a rotation that read the endpoint before a 410 disabled it does not enable it again', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const { id } = await register(tenant);
    const disabledMeanwhile = readsMeetingAt(1, async () => {
      expect(await store.endpoints.disable(tenant, id, 'gone', new Date())).toBe(true);
    });
    await rotateWebhookSecret({ endpoints: disabledMeanwhile, clock: systemClock, sealer }, tenant, id);
    expect((await store.endpoints.get(tenant, id))?.status).toBe('disabled');
  });
});

describe('webhook endpoint lists', () => {
  it('refuse a cursor issued to another tenant', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const other = `tenant-${randomUUID()}`;
    for (let i = 0; i < 2; i++) {
      await register(tenant);
      await register(other);
    }
    const list = (as: string, cursor?: string) =>
      listWebhookEndpoints({ endpoints: store.endpoints, cursorKey: async () => key }, as, {
        limit: ['1'],
        ...(cursor !== undefined && { cursor: [cursor] }),
      });
    const { nextCursor } = await list(tenant);
    expect(nextCursor).not.toBe('');
    await expect(list(tenant, nextCursor)).resolves.toMatchObject({ endpoints: [expect.anything()] });
    await expect(list(other, nextCursor)).rejects.toMatchObject({
      name: 'InvalidRequestError',
      invalidParams: [expect.objectContaining({ name: 'cursor' })],
    });
  });
});

describe('the limit of webhook endpoints per tenant', () => {
  it('holds under parallel creations: 130 at once store exactly the limit, the rest answer 409', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const outcomes = await Promise.allSettled(Array.from({ length: 130 }, () => register(tenant)));
    const created = outcomes.filter((outcome) => outcome.status === 'fulfilled').length;
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect((await store.endpoints.all(tenant)).length).toBe(MAX_ENDPOINTS_PER_TENANT);
    expect(created).toBe(MAX_ENDPOINTS_PER_TENANT);
    for (const reason of refused) expect(reason).toMatchObject({ code: 'too_many_webhook_endpoints' });
  }, 60_000);

  it('frees a place when an endpoint is deleted, and one a creation left half done after a while', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const ids: string[] = [];
    for (let i = 0; i < MAX_ENDPOINTS_PER_TENANT; i++) ids.push((await register(tenant)).id);
    await expect(register(tenant)).rejects.toMatchObject({ code: 'too_many_webhook_endpoints' });
    await store.endpoints.delete(tenant, ids[0] as string);
    await expect(register(tenant)).resolves.toMatchObject({ id: expect.any(String) });
    // A deletion that stopped between its two writes: the endpoint is gone, its id still allocated.
    const stray = ids[1] as string;
    await raw.delete({ TableName: TABLE, Key: webhookEndpointKey(tenant, stray) });
    await expect(register(tenant)).rejects.toMatchObject({ code: 'too_many_webhook_endpoints' });
    // Once it is older than a creation in progress can be, its place is freed.
    await raw.update({
      TableName: TABLE,
      Key: webhookEndpointAllocationKey(tenant),
      UpdateExpression: 'SET endpointIds.#id = :old',
      ExpressionAttributeNames: { '#id': stray },
      ExpressionAttributeValues: { ':old': new Date(Date.now() - 120_000).toISOString() },
    });
    await expect(register(tenant)).resolves.toMatchObject({ id: expect.any(String) });
    expect((await store.endpoints.all(tenant)).length).toBe(MAX_ENDPOINTS_PER_TENANT);
  }, 60_000);
});
