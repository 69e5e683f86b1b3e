import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ClientRecord } from '#domain/client';
import type { ClientStore } from '#domain/ports';
import { isScope } from '#domain/scopes';
import { clientKey } from './keys.ts';

const fromClientItem = (item: Record<string, unknown>): ClientRecord => {
  const { clientId, secretHash, scopes, tenant, createdAt } = item;
  if (
    typeof clientId !== 'string' ||
    typeof secretHash !== 'string' ||
    typeof tenant !== 'string' ||
    typeof createdAt !== 'string' ||
    !Array.isArray(scopes)
  ) {
    throw new Error(`The stored client ${String(clientId)} is malformed`);
  }
  // A scope withdrawn from the platform is no longer granted, even if a stored client still lists it.
  return { clientId, secretHash, tenant, createdAt, scopes: scopes.map(String).filter(isScope) };
};

export class DynamoDbClientStore implements ClientStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(clientId: string): Promise<ClientRecord | undefined> {
    // Strongly consistent, so a rotated secret or narrowed scopes take effect at once.
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: clientKey(clientId), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : fromClientItem(Item);
  }

  async put(client: ClientRecord): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...clientKey(client.clientId), type: 'Client', ...client },
      }),
    );
  }
}
