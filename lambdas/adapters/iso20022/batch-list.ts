import type { BatchList, BatchPageRequest, BatchPosition } from '#domain/iso20022/list-batches';
import type { BatchRecord } from '#domain/iso20022/ports';
import type { DocumentClient } from '../aws/dynamodb-client.ts';
import { batchKey, batchListKey, batchMessageKey } from '../table/keys.ts';
import { LIST_INDEXES } from '../table/table-definition.ts';
import { batchOf } from './batch-store.ts';

const INDEX = LIST_INDEXES.all;
/** Above every character of a batchId: `<time>#~` is after every batch of that millisecond. */
const AFTER_ANY_ID = '~';
const BATCH_GET_ATTEMPTS = 8;

/**
 * A tenant's batches: one Query of the list index (keys only, a page and one more) and one
 * BatchGetItem of the page's batch items; a message id through its claim, by key.
 */
export class DynamoDbBatchList implements BatchList {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
  ) {}

  async page({ tenant, from, to, after, limit }: BatchPageRequest) {
    const upper = [
      ...(to !== undefined ? [`${to}#${AFTER_ANY_ID}`] : []),
      ...(after !== undefined ? [`${after.createdAt}#${after.batchId}`] : []),
    ].sort()[0];
    const lower = from;
    const range =
      lower !== undefined && upper !== undefined
        ? { condition: ' AND #order BETWEEN :lower AND :upper', values: { ':lower': lower, ':upper': upper } }
        : upper !== undefined
          ? { condition: ' AND #order <= :upper', values: { ':upper': upper } }
          : lower !== undefined
            ? { condition: ' AND #order >= :lower', values: { ':lower': lower } }
            : undefined;
    const afterOrder = after && `${after.createdAt}#${after.batchId}`;
    const result = await this.client.query({
      TableName: this.tableName,
      IndexName: INDEX.indexName,
      KeyConditionExpression: `#list = :list${range?.condition ?? ''}`,
      ExpressionAttributeNames: { '#list': INDEX.partitionKey, ...(range && { '#order': INDEX.sortKey }) },
      ExpressionAttributeValues: { ':list': batchListKey(tenant), ...range?.values },
      ScanIndexForward: false,
      // One more than the page says whether another follows; one more again for the bound itself.
      Limit: limit + (afterOrder !== undefined ? 2 : 1),
    });
    const positions = (result.Items ?? [])
      .map((item) => String(item[INDEX.sortKey]))
      .filter((order) => order !== afterOrder)
      .map((order): BatchPosition => {
        const separator = order.indexOf('#');
        return { createdAt: order.slice(0, separator), batchId: order.slice(separator + 1) };
      });
    const onPage = positions.slice(0, limit);
    const more =
      positions.length > limit || (result.LastEvaluatedKey !== undefined && onPage.length === limit);
    const last = onPage.at(-1);
    return {
      batches: await this.batches(tenant, onPage),
      ...(more && last !== undefined && { next: last }),
    };
  }

  async byMessageId(tenant: string, messageId: string): Promise<BatchRecord | undefined> {
    const { Item: claim } = await this.client.get({
      TableName: this.tableName,
      Key: batchMessageKey(tenant, messageId),
    });
    // A JSON batch has no claim: its messageId is its batchId without hyphens.
    const batchId =
      claim !== undefined
        ? String(claim.batchId)
        : /^[0-9a-f]{32}$/.test(messageId)
          ? messageId.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5')
          : undefined;
    if (batchId === undefined) return undefined;
    const { Item } = await this.client.get({ TableName: this.tableName, Key: batchKey(tenant, batchId) });
    if (Item === undefined) return undefined;
    const batch = batchOf(Item);
    return batch.message.messageId === messageId ? batch : undefined;
  }

  /** The batch items of the page, in page order (eventually consistent, like the index). */
  private async batches(tenant: string, positions: readonly BatchPosition[]): Promise<BatchRecord[]> {
    if (positions.length === 0) return [];
    const found = new Map<string, BatchRecord>();
    let keys: Record<string, unknown>[] = positions.map((position) => ({
      ...batchKey(tenant, position.batchId),
    }));
    for (let attempt = 0; keys.length > 0; attempt++) {
      if (attempt === BATCH_GET_ATTEMPTS) throw new Error(`BatchGetItem left ${keys.length} keys unread`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
      const result = await this.client.batchGet({ RequestItems: { [this.tableName]: { Keys: keys } } });
      for (const item of result.Responses?.[this.tableName] ?? []) {
        const batch = batchOf(item);
        found.set(batch.batchId, batch);
      }
      keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return positions.flatMap((position) => found.get(position.batchId) ?? []);
  }
}
