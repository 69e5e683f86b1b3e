import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The one table, described once: the CDK stack and the local runtime both build it from here.
 * Every key attribute is a string.
 */
export interface IndexDefinition {
  indexName: string;
  partitionKey: string;
  sortKey: string;
}

export const TABLE_DEFINITION = {
  partitionKey: 'pk',
  sortKey: 'sk',
  indexes: [] as readonly IndexDefinition[],
} as const;

export const createTableInput = (tableName: string): CreateTableCommandInput => {
  const { partitionKey, sortKey, indexes } = TABLE_DEFINITION;
  const keyAttributes = new Set([
    partitionKey,
    sortKey,
    ...indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ]);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...keyAttributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: partitionKey, KeyType: 'HASH' },
      { AttributeName: sortKey, KeyType: 'RANGE' },
    ],
    ...(indexes.length > 0 && {
      GlobalSecondaryIndexes: indexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  };
};
