import {
  type ClientJwkSet,
  type ClientRecord,
  TOKEN_ENDPOINT_AUTH_METHODS,
  type TokenEndpointAuthMethod,
} from '#domain/access/client';
import type { ClientStore } from '#domain/access/ports';
import { isScope } from '#domain/access/scopes';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { clientKey } from '../table/keys.ts';

const CLIENT_TYPE = 'Client';

const optionalString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

const fromClientItem = (item: Record<string, unknown>): ClientRecord => {
  const { clientId, secretHash, scopes, tenant, createdAt, revision } = item;
  if (
    typeof clientId !== 'string' ||
    typeof secretHash !== 'string' ||
    typeof tenant !== 'string' ||
    typeof createdAt !== 'string' ||
    !Array.isArray(scopes) ||
    (revision !== undefined && !Number.isSafeInteger(revision)) ||
    (item.tokenGeneration !== undefined && !Number.isSafeInteger(item.tokenGeneration))
  ) {
    throw new Error(`The stored client ${String(clientId)} is malformed`);
  }
  const previousSecretHash = optionalString(item.previousSecretHash);
  const previousSecretExpiresAt = optionalString(item.previousSecretExpiresAt);
  const disabledAt = optionalString(item.disabledAt);
  return {
    clientId,
    secretHash,
    tenant,
    createdAt,
    // A scope withdrawn from the platform is no longer granted, even if a stored client still lists it.
    scopes: scopes.map(String).filter(isScope),
    ...(previousSecretHash !== undefined && { previousSecretHash }),
    ...(previousSecretExpiresAt !== undefined && { previousSecretExpiresAt }),
    ...(disabledAt !== undefined && { disabledAt }),
    ...(revision !== undefined && { revision: revision as number }),
    ...(item.tokenGeneration !== undefined && { tokenGeneration: item.tokenGeneration as number }),
    ...clientAuthenticationOf(item),
  };
};

/** The key set, methods and DPoP requirement as stored; anything malformed is refused, never guessed. */
const clientAuthenticationOf = (
  item: Record<string, unknown>,
): Pick<ClientRecord, 'jwks' | 'authMethods' | 'requireDpop'> => {
  const { jwks, authMethods, requireDpop } = item;
  const keys = (jwks as { keys?: unknown } | undefined)?.keys;
  if (
    (jwks !== undefined && (!Array.isArray(keys) || keys.some((key) => typeof key?.kid !== 'string'))) ||
    (authMethods !== undefined &&
      (!Array.isArray(authMethods) ||
        authMethods.some(
          (method) => !(TOKEN_ENDPOINT_AUTH_METHODS as readonly unknown[]).includes(method),
        ))) ||
    (requireDpop !== undefined && typeof requireDpop !== 'boolean')
  ) {
    throw new Error(`The stored client ${String(item.clientId)} has malformed authentication settings`);
  }
  return {
    ...(jwks !== undefined && { jwks: jwks as ClientJwkSet }),
    ...(authMethods !== undefined && { authMethods: authMethods as TokenEndpointAuthMethod[] }),
    ...(requireDpop !== undefined && { requireDpop: requireDpop as boolean }),
  };
};

export class DynamoDbClientStore implements ClientStore {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
  ) {}

  async get(clientId: string): Promise<ClientRecord | undefined> {
    // Strongly consistent, so a rotated secret or narrowed scopes take effect at once.
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: clientKey(clientId),
      ConsistentRead: true,
    });
    return Item === undefined ? undefined : fromClientItem(Item);
  }

  async put(client: ClientRecord): Promise<void> {
    await this.client.put({ TableName: this.tableName, Item: this.itemOf(client) });
  }

  async create(client: ClientRecord): Promise<boolean> {
    return this.conditionalPut(client, 'attribute_not_exists(pk)', {});
  }

  async update(client: ClientRecord, expectedRevision: number | undefined): Promise<boolean> {
    return expectedRevision === undefined
      ? this.conditionalPut(client, 'attribute_exists(pk) AND attribute_not_exists(revision)', {})
      : this.conditionalPut(client, 'revision = :expected', { ':expected': expectedRevision });
  }

  async list(): Promise<ClientRecord[]> {
    const clients: ClientRecord[] = [];
    // An operator's occasional read: a filtered scan, not an index every write would pay for.
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.scan({
        TableName: this.tableName,
        FilterExpression: 'sk = :sk AND #type = :type',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':sk': clientKey('').sk, ':type': CLIENT_TYPE },
        ConsistentRead: true,
        ExclusiveStartKey,
      });
      for (const item of page.Items ?? []) clients.push(fromClientItem(item));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return clients.sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
  }

  private itemOf(client: ClientRecord): Record<string, unknown> {
    return { ...clientKey(client.clientId), type: CLIENT_TYPE, ...client };
  }

  private async conditionalPut(
    client: ClientRecord,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await this.client.put({
        TableName: this.tableName,
        Item: this.itemOf(client),
        ConditionExpression: condition,
        ...(Object.keys(values).length > 0 && { ExpressionAttributeValues: values }),
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
