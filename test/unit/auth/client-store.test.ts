import type { GetCommandInput, PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import type { DocumentClient } from '#adapters/aws/dynamodb-client';
import type { ClientRecord } from '#domain/access/client';

const RECORD: ClientRecord = {
  clientId: 'acme-payments',
  secretHash: 'scrypt$16384$8$1$salt$hash',
  scopes: ['transactions:read'],
  tenant: 'acme',
  createdAt: '2030-01-02T03:04:05.000Z',
};

const fakeTable = () => {
  const items = new Map<string, Record<string, unknown>>();
  const commands: unknown[] = [];
  const client: Partial<DocumentClient> = {
    put: async (input: PutCommandInput) => {
      commands.push(input);
      const item = input.Item as Record<string, unknown>;
      items.set(`${item.pk}|${item.sk}`, item);
      return { $metadata: {} };
    },
    get: async (input: GetCommandInput) => {
      commands.push(input);
      const key = input.Key as Record<string, unknown>;
      return { Item: items.get(`${key.pk}|${key.sk}`), $metadata: {} };
    },
  };
  return {
    store: new DynamoDbClientStore(client as unknown as DocumentClient, 'credit-transfers'),
    items,
    commands,
  };
};

describe('DynamoDbClientStore', () => {
  it('keeps a client under its client key', async () => {
    const { store, items } = fakeTable();

    await store.put(RECORD);

    expect([...items.values()]).toEqual([
      { pk: 'CLIENT#acme-payments', sk: 'CLIENT', type: 'Client', ...RECORD },
    ]);
  });

  it('reads a client back, strongly consistent', async () => {
    const { store, commands } = fakeTable();
    await store.put(RECORD);

    expect(await store.get('acme-payments')).toEqual(RECORD);
    expect(commands.at(-1)).toMatchObject({
      TableName: 'credit-transfers',
      ConsistentRead: true,
    });
  });

  it('answers undefined for an unknown client', async () => {
    expect(await fakeTable().store.get('nobody')).toBeUndefined();
  });

  it('no longer grants a scope the platform has withdrawn', async () => {
    const { store, items } = fakeTable();
    await store.put(RECORD);
    const item = items.get('CLIENT#acme-payments|CLIENT') as Record<string, unknown>;
    item.scopes = ['transactions:read', 'legacy:admin'];

    expect((await store.get('acme-payments'))?.scopes).toEqual(['transactions:read']);
  });
});
