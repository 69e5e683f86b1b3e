import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  ScanCommand,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { withListValues } from '#adapters/credit-transfers/credit-transfer-list';
import { createTableInput, TABLE_DEFINITION } from '#adapters/table/table-definition';

/**
 * dynalite accepts UpdateTable with a GlobalSecondaryIndexUpdates Create but adds no index. So a
 * local table made before an index was defined is rebuilt instead: copied to a side table that
 * has every index, dropped, created again from the definition and copied back. Each copied item
 * gets the index values it lacks, so transfers stored before the list existed are listed too.
 * The side table is kept until the copy back is complete: a run stopped halfway resumes.
 */

const describe = async (client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> => {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
};

export const missingIndexes = (table: TableDescription): string[] => {
  const present = new Set((table.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  return TABLE_DEFINITION.indexes.map((index) => index.indexName).filter((name) => !present.has(name));
};

const waitUntil = async (
  client: DynamoDBClient,
  tableName: string,
  state: 'ACTIVE' | 'GONE',
): Promise<void> => {
  for (let attempt = 0; attempt < 200; attempt++) {
    const table = await describe(client, tableName);
    if (state === 'GONE' ? table === undefined : table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Table ${tableName} did not become ${state.toLowerCase()}`);
};

const create = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  await waitUntil(client, tableName, 'ACTIVE');
};

const drop = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  await client.send(new DeleteTableCommand({ TableName: tableName }));
  await waitUntil(client, tableName, 'GONE');
};

const copy = async (client: DynamoDBClient, from: string, to: string): Promise<number> => {
  let copied = 0;
  let startKey: ScanCommand['input']['ExclusiveStartKey'];
  do {
    const page = await client.send(
      new ScanCommand({ TableName: from, ExclusiveStartKey: startKey, Limit: 500 }),
    );
    const items = (page.Items ?? []).map((item) => marshall(withListValues(unmarshall(item))));
    for (let start = 0; start < items.length; start += 25) {
      let requests = items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const result = await client.send(new BatchWriteItemCommand({ RequestItems: { [to]: requests } }));
        requests = (result.UnprocessedItems?.[to] ?? []) as typeof requests;
      }
    }
    copied += items.length;
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return copied;
};

/** Rebuilds `tableName` with every defined index when it lacks one; returns the number of items copied. */
export const rebuildWithMissingIndexes = async (
  client: DynamoDBClient,
  tableName: string,
): Promise<number> => {
  const side = `${tableName}.rebuild`;
  const original = await describe(client, tableName);
  const sideTable = await describe(client, side);
  const originalLacksIndexes = original !== undefined && missingIndexes(original).length > 0;
  if (sideTable === undefined && !originalLacksIndexes) return 0;
  if (originalLacksIndexes) {
    // Until it is dropped the original holds everything: a stopped copy starts over from it.
    if (sideTable !== undefined) await drop(client, side);
    await create(client, side);
    await copy(client, tableName, side);
    await drop(client, tableName);
  }
  if ((await describe(client, tableName)) === undefined) await create(client, tableName);
  const copied = await copy(client, side, tableName);
  await drop(client, side);
  return copied;
};
