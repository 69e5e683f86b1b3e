import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';

/**
 * Copies a table restored from a backup or a point in time into a stage's table without moving
 * any item back in time. An item of the target that changed after the recovery point is newer
 * than its copy and is kept: a transfer's history only grows, so a transfer is written only where
 * the target's history is shorter (or the transfer is missing); any other item only where the
 * target has none. What the target holds in the same or a newer state is left as it is and
 * reported, so a transfer cancelled or settled since the recovery point stays so.
 */
export interface TableCopyReport {
  /** Items written: missing from the target, or transfers the target holds at an earlier status. */
  readonly copied: number;
  /** Keys of the items the target holds in the same or a newer state, kept as they are. */
  readonly kept: readonly { pk: unknown; sk: unknown }[];
}

const SEGMENTS = 4;
/** Conditional puts in flight per scan segment. */
const PUTS_IN_FLIGHT = 10;

type Item = Record<string, unknown>;

/** Written only if the target's item is absent, or a transfer whose history is shorter than the copy's. */
const neverBackInTime = (item: Item) =>
  Array.isArray(item.history)
    ? {
        ConditionExpression: 'attribute_not_exists(pk) OR size(#history) < :length',
        ExpressionAttributeNames: { '#history': 'history' },
        ExpressionAttributeValues: { ':length': item.history.length },
      }
    : { ConditionExpression: 'attribute_not_exists(pk)' };

export const copyTable = async (
  client: DynamoDBClient,
  { from, to }: { from: string; to: string },
): Promise<TableCopyReport> => {
  if (from === to) throw new Error('--from and --to name the same table');
  const documents = DynamoDBDocumentClient.from(client);
  let copied = 0;
  const kept: { pk: unknown; sk: unknown }[] = [];

  const put = async (item: Item): Promise<void> => {
    try {
      await documents.send(new PutCommand({ TableName: to, Item: item, ...neverBackInTime(item) }));
      copied += 1;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      kept.push({ pk: item.pk, sk: item.sk });
    }
  };

  const copySegment = async (segment: number): Promise<void> => {
    let ExclusiveStartKey: Item | undefined;
    do {
      const page = await documents.send(
        new ScanCommand({
          TableName: from,
          Segment: segment,
          TotalSegments: SEGMENTS,
          ExclusiveStartKey,
          ConsistentRead: true,
        }),
      );
      const items = page.Items ?? [];
      for (let i = 0; i < items.length; i += PUTS_IN_FLIGHT) {
        await Promise.all(items.slice(i, i + PUTS_IN_FLIGHT).map(put));
      }
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
  };

  await Promise.all(Array.from({ length: SEGMENTS }, (_, segment) => copySegment(segment)));
  return { copied, kept };
};
