import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { UNIX_SOCKET_ENDPOINT, UnixSocketAgent } from '#adapters/aws/unix-socket-agent';
import { createTableInput } from '#adapters/table/table-definition';
import { rebuildWithMissingIndexes } from './table-rebuild.ts';

/**
 * The AWS SDK's client, for administering a local table (the functions use their own, lighter
 * one): the service's table on its Unix socket (`{ socket }`), or a test's dynalite at `endpoint`.
 */
export const createDynamoDbClient = (table: string | { socket: string }): DynamoDBClient =>
  new DynamoDBClient({
    ...(typeof table === 'string'
      ? { endpoint: table }
      : { endpoint: UNIX_SOCKET_ENDPOINT, requestHandler: { httpAgent: new UnixSocketAgent(table.socket) } }),
    region: process.env.AWS_REGION ?? 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 5,
  });

/**
 * The table is stuck being created: dynalite writes a new table as CREATING, then as ACTIVE, and a
 * crash between the two keeps the first only. No item can be written before ACTIVE, so it is empty.
 */
export class TableStuckCreatingError extends Error {
  override name = 'TableStuckCreatingError';
}

/** Creates the table from the shared definition unless it exists, and waits until it is active. */
export const ensureTable = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
    } catch (createError) {
      if (!(createError instanceof ResourceInUseException)) throw createError;
    }
  }
  // dynalite activates a table at once (createTableMs 0): one still creating after this never will.
  let status: string | undefined;
  for (let attempt = 0; attempt < 40; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    status = Table?.TableStatus;
    if (status === 'ACTIVE') {
      // A table from before an index was defined gets it (see table-rebuild.ts).
      await rebuildWithMissingIndexes(client, tableName);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (status === 'CREATING') throw new TableStuckCreatingError(`Table ${tableName} was never activated`);
  throw new Error(`Table ${tableName} did not become active`);
};

/**
 * The partition-key prefix every payment, webhook endpoint, event and delivery had before each
 * kind got a prefix of its own (keys.ts): no key is built under it any more.
 */
export const OLD_LAYOUT_PREFIX = 'TENANT#';

/**
 * Reads every item once, so a damaged table file is found at start rather than by a request
 * answered 500 later. Local tables are small; the read is a count, nothing is kept. Answers how
 * many items are of the old key layout (OLD_LAYOUT_PREFIX), which this version would read as absent.
 */
export const checkTableReadable = async (client: DynamoDBClient, tableName: string): Promise<number> => {
  let oldLayout = 0;
  let startKey: ScanCommand['input']['ExclusiveStartKey'];
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        Select: 'COUNT',
        // The filter applies after the read: every item is still read.
        FilterExpression: 'begins_with(pk, :old)',
        ExpressionAttributeValues: { ':old': { S: OLD_LAYOUT_PREFIX } },
        ExclusiveStartKey: startKey,
      }),
    );
    oldLayout += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return oldLayout;
};
