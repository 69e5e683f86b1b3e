import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  waitUntilTableExists,
  waitUntilTableNotExists,
} from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createTableInput } from '#adapters/table/table-definition';
import type { DrillTables, Item, RecoveryPoint, RecoveryPoints, TableKey } from './restore-drill.ts';

/**
 * How the SDK's table waiters poll here, in seconds. Their own default waits 20 s before its second
 * look: a table DynamoDB (or dynalite) still shows CREATING or DELETING at the first look would
 * hold the drill 20 s or more for a change of well under a second locally, and a few seconds on
 * AWS for an empty table. The first look is at once; then from a tenth of a second, doubling to 5 s.
 */
const TABLE_POLLING = { minDelay: 0.1, maxDelay: 5, maxWaitTime: 600 };

/**
 * Creates a table from the shared definition and resolves once it is ACTIVE. DynamoDB, and
 * dynalite as the local runtime and the tests run it, answer CreateTable with the table CREATING
 * and refuse writes to it (ResourceNotFoundException) until it is ACTIVE.
 */
export const createActiveTable = async (client: DynamoDBClient, table: string): Promise<void> => {
  await client.send(new CreateTableCommand(createTableInput(table)));
  await waitUntilTableExists({ client, ...TABLE_POLLING }, { TableName: table });
};

/** The drill's table reads over DynamoDB (a stage's tables, or local ones). */
export class DynamoDbDrillTables implements DrillTables {
  private readonly documents: DynamoDBDocumentClient;

  constructor(private readonly client: DynamoDBClient) {
    this.documents = DynamoDBDocumentClient.from(client);
  }

  async exists(table: string): Promise<boolean> {
    try {
      await this.client.send(new DescribeTableCommand({ TableName: table }));
      return true;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return false;
      throw error;
    }
  }

  async *scan(table: string): AsyncIterable<Item> {
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey }),
      );
      yield* page.Items ?? [];
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
  }

  async get(table: string, key: TableKey): Promise<Item | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: table, Key: { ...key }, ConsistentRead: true }),
    );
    return Item;
  }

  async delete(table: string): Promise<void> {
    try {
      await this.client.send(new DeleteTableCommand({ TableName: table }));
      await waitUntilTableNotExists({ client: this.client, ...TABLE_POLLING }, { TableName: table });
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
  }
}

/**
 * The local stand-in for AWS Backup: the recovery point is the table as it is now, and a restore
 * copies it into a new table made from the same definition. What is compared after is real.
 */
export class TableCopyRecoveryPoints implements RecoveryPoints {
  private readonly documents: DynamoDBDocumentClient;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.documents = DynamoDBDocumentClient.from(client);
  }

  async latest(): Promise<RecoveryPoint> {
    return { id: `table:${this.table}`, createdAt: this.now(), sourceTable: this.table };
  }

  async restore(point: RecoveryPoint, targetTable: string): Promise<void> {
    await createActiveTable(this.client, targetTable);
    const tables = new DynamoDbDrillTables(this.client);
    let batch: Item[] = [];
    const flush = async (): Promise<void> => {
      let requests = batch.map((Item) => ({ PutRequest: { Item } }));
      batch = [];
      while (requests.length > 0) {
        const { UnprocessedItems } = await this.documents.send(
          new BatchWriteCommand({ RequestItems: { [targetTable]: requests } }),
        );
        requests = (UnprocessedItems?.[targetTable] ?? []) as typeof requests;
      }
    };
    for await (const item of tables.scan(point.sourceTable)) {
      batch.push(item);
      if (batch.length === 25) await flush();
    }
    await flush();
  }
}
