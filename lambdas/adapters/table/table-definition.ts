import type { CreateTableCommandInput, GlobalSecondaryIndex } from '@aws-sdk/client-dynamodb';

/**
 * The one table, described once: the CDK stack and the local runtime both build it from here.
 * Every key attribute is a string.
 */
export interface IndexDefinition {
  indexName: string;
  partitionKey: string;
  sortKey: string;
  /** Non-key attributes the index carries besides the keys (INCLUDE); every attribute (ALL) when absent. */
  include?: readonly string[];
}

/** The map attribute of a credit transfer that holds what the list filters look at. */
export const LIST_ENTRY_ATTRIBUTE = 'listEntry';
const LIST_ORDER_ATTRIBUTE = 'listOrder';

/**
 * The list operation's indexes: a tenant's transfers newest first, overall and per account.
 * They carry only the filter fields (INCLUDE): a status change writes only the status index
 * (its entry moves to the new status's partition), and a page reads its transfers from the table by key.
 */
export const LIST_INDEXES = {
  all: { indexName: 'listByTenant', partitionKey: 'listTenant', sortKey: LIST_ORDER_ATTRIBUTE },
  debtorAccountId: {
    indexName: 'listByDebtorAccountId',
    partitionKey: 'listDebtorAccountId',
    sortKey: LIST_ORDER_ATTRIBUTE,
  },
  creditorAccountId: {
    indexName: 'listByCreditorAccountId',
    partitionKey: 'listCreditorAccountId',
    sortKey: LIST_ORDER_ATTRIBUTE,
  },
  creditorAccountNumber: {
    indexName: 'listByCreditorAccountNumber',
    partitionKey: 'listCreditorAccountNumber',
    sortKey: LIST_ORDER_ATTRIBUTE,
  },
  /**
   * By current status: the one list index whose key changes after creation. Every write that
   * changes `status` sets this partition key in the same conditional write (keys.ts listStatusKey).
   */
  status: { indexName: 'listByStatus', partitionKey: 'listStatus', sortKey: LIST_ORDER_ATTRIBUTE },
  /** By the references an ERP reconciles on (sparse: only transfers that have them). */
  endToEndId: {
    indexName: 'listByEndToEndId',
    partitionKey: 'listEndToEndId',
    sortKey: LIST_ORDER_ATTRIBUTE,
  },
  instructionId: {
    indexName: 'listByInstructionId',
    partitionKey: 'listInstructionId',
    sortKey: LIST_ORDER_ATTRIBUTE,
  },
  batchId: { indexName: 'listByBatch', partitionKey: 'listBatch', sortKey: LIST_ORDER_ATTRIBUTE },
} as const satisfies Record<string, IndexDefinition>;

const LIST_INDEX_DEFINITIONS: readonly IndexDefinition[] = Object.values(LIST_INDEXES).map((index) => ({
  ...index,
  include: [LIST_ENTRY_ATTRIBUTE],
}));

/**
 * The reconciler's sparse index: transfers not final (or not fully published) by the time they
 * should next be looked at. It carries the status besides the keys, and is written only when
 * that time moves.
 */
export const RECOVERY_INDEX = {
  indexName: 'recoveryByDueTime',
  partitionKey: 'recoveryShard',
  sortKey: 'recoveryDueAt',
  include: ['status'],
} as const satisfies IndexDefinition;

/**
 * Webhooks' one index, overloaded: a tenant's events in the order they were recorded (for the
 * events API), and the deliveries waiting for an attempt by due time (sparse: only while queued).
 * One index rather than two, since a deployed table gains one index per update.
 */
export const WEBHOOK_INDEX = {
  indexName: 'webhookEventsAndDeliveries',
  partitionKey: 'webhookIndexKey',
  sortKey: 'webhookIndexOrder',
  include: ['body', 'eventType', 'expiresAt', 'tenant', 'endpointId', 'eventId', 'attempts', 'state'],
} as const satisfies IndexDefinition;

/**
 * Items that carry this attribute (epoch seconds) are deleted by DynamoDB some time after it
 * passes, e.g. the failed-authentication throttle's counters. Readers still check it themselves:
 * deletion can lag by days.
 */
export const TIME_TO_LIVE_ATTRIBUTE = 'expiresAt';

export const TABLE_DEFINITION = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: TIME_TO_LIVE_ATTRIBUTE,
  indexes: [...LIST_INDEX_DEFINITIONS, RECOVERY_INDEX, WEBHOOK_INDEX] as readonly IndexDefinition[],
} as const;

/** One index as CreateTable and UpdateTable (Create) take it. */
export const globalSecondaryIndexInput = (index: IndexDefinition): GlobalSecondaryIndex => ({
  IndexName: index.indexName,
  KeySchema: [
    { AttributeName: index.partitionKey, KeyType: 'HASH' },
    { AttributeName: index.sortKey, KeyType: 'RANGE' },
  ],
  Projection:
    index.include === undefined
      ? { ProjectionType: 'ALL' }
      : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] },
});

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
      GlobalSecondaryIndexes: indexes.map(globalSecondaryIndexInput),
    }),
  };
};
