import type { QueryCommandInput, QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { ListPosition } from '#domain/commons/cursor';
import type {
  CreditTransferList,
  ListPage,
  ListPageRequest,
} from '#domain/credit-transfers/list-credit-transfers';
import {
  type ListEntry,
  type ListFilters,
  listEntryOf,
  matchesListFilters,
  matchesStatusFilter,
} from '#domain/credit-transfers/list-filters';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import type { DocumentClient } from '../aws/dynamodb-client.ts';
import {
  creditTransferKey,
  creditTransferListValues,
  listBatchKey,
  listCreditorAccountIdKey,
  listCreditorAccountNumberKey,
  listDebtorAccountIdKey,
  listEndToEndIdKey,
  listInstructionIdKey,
  listOrderKey,
  listPositionOf,
  listStatusKey,
  listStatusValues,
  listTenantKey,
} from '../table/keys.ts';
import { LIST_ENTRY_ATTRIBUTE, LIST_INDEXES } from '../table/table-definition.ts';
import {
  type CapacityObserver,
  fromCreditTransferItem,
  holdsCreditTransfer,
} from './credit-transfer-store.ts';

/**
 * What one list request may read before it answers: a page fills up to its limit even when
 * filters drop most transfers, but never by reading without end. When the budget runs out the
 * page is returned as it is (possibly empty) with a cursor after the last transfer read.
 */
export interface ListReadBudget {
  maxQueries: number;
  maxItemsRead: number;
}

export const DEFAULT_READ_BUDGET: ListReadBudget = { maxQueries: 5, maxItemsRead: 1000 };

/**
 * Most index entries Pagination-Total reads: past it the total is reported as at least the
 * matches counted (`10000+`), so a first page costs at most a few hundred read units and answers
 * in bounded time however many transfers a tenant or an account has.
 */
export const MAX_COUNTED_ENTRIES = 10_000;

/** Items per Query when filters may drop some: enough that a selective filter needs few round trips. */
const REFINING_CHUNK = 100;
const BATCH_GET_ATTEMPTS = 8;

type ListIndex = (typeof LIST_INDEXES)[keyof typeof LIST_INDEXES];

interface IndexChoice {
  index: ListIndex;
  partition: string;
  /** True when filters remain beyond the one the index answers, so some index entries may not match. */
  refines: boolean;
}

/**
 * A status, reference (end-to-end id, instruction id, batch) or account filter narrows to one
 * index partition; without one, the tenant's partition.
 * Status comes first: only the status index knows the current status (the account indexes carry
 * the fixed filter fields alone, so a status change writes none of them).
 */
const chooseIndex = (tenant: string, filters: ListFilters): IndexChoice => {
  const given = Object.values(filters).filter((value) => value !== undefined).length;
  const status = filters['status.eq'];
  if (status !== undefined) {
    return { index: LIST_INDEXES.status, partition: listStatusKey(tenant, status), refines: given > 1 };
  }
  // A reference names a few transfers: its partition is narrower than an account's.
  const references = [
    [filters['endToEndId.eq'], LIST_INDEXES.endToEndId, listEndToEndIdKey],
    [filters['instructionId.eq'], LIST_INDEXES.instructionId, listInstructionIdKey],
    [filters['batchId.eq'], LIST_INDEXES.batchId, listBatchKey],
  ] as const;
  for (const [value, index, key] of references) {
    if (value !== undefined) return { index, partition: key(tenant, value), refines: given > 1 };
  }
  const debtor = filters['debtorAccountId.eq'];
  if (debtor !== undefined) {
    return {
      index: LIST_INDEXES.debtorAccountId,
      partition: listDebtorAccountIdKey(tenant, debtor),
      refines: given > 1,
    };
  }
  const creditorId = filters['creditorAccountId.eq'];
  if (creditorId !== undefined) {
    return {
      index: LIST_INDEXES.creditorAccountId,
      partition: listCreditorAccountIdKey(tenant, creditorId),
      refines: given > 1,
    };
  }
  const creditorNumber = filters['creditorAccountNumber.eq'];
  if (creditorNumber !== undefined) {
    return {
      index: LIST_INDEXES.creditorAccountNumber,
      partition: listCreditorAccountNumberKey(tenant, creditorNumber),
      refines: given > 1,
    };
  }
  return { index: LIST_INDEXES.all, partition: listTenantKey(tenant), refines: given > 0 };
};

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

export class DynamoDbCreditTransferList implements CreditTransferList {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
    private readonly options: {
      onCapacity?: CapacityObserver;
      budget?: ListReadBudget;
      /** Index entries the count reads at most (MAX_COUNTED_ENTRIES). */
      maxCounted?: number;
    } = {},
  ) {}

  async page({ tenant, filters, after, limit, withTotal }: ListPageRequest): Promise<ListPage> {
    const choice = chooseIndex(tenant, filters);
    const budget = this.options.budget ?? DEFAULT_READ_BUDGET;
    const matched: ListPosition[] = [];
    /** The last transfer read that the page has passed: returned, or dropped by a filter. */
    let lastRead: ListPosition | undefined;
    /** The newest index entry when paging began: the count stops there. */
    let top: string | undefined;
    let startKey: Record<string, unknown> | undefined;
    let exhausted = false;
    let anotherFollows = false;
    let queries = 0;
    let itemsRead = 0;

    while (!anotherFollows && !exhausted && queries < budget.maxQueries && itemsRead < budget.maxItemsRead) {
      // One more than the page needs, to learn whether a next page exists.
      const wanted = limit - matched.length + 1;
      const result = await this.query(choice, 'listQuery', {
        Limit: Math.min(
          budget.maxItemsRead - itemsRead,
          choice.refines ? Math.max(wanted, REFINING_CHUNK) : wanted,
        ),
        ...(after !== undefined && { after }),
        ...(startKey !== undefined && { startKey }),
      });
      queries++;
      for (const item of result.Items ?? []) {
        itemsRead++;
        const order = item[choice.index.sortKey] as string;
        top ??= order;
        const position = listPositionOf(order);
        const matches = matchesListFilters(item[LIST_ENTRY_ATTRIBUTE] as ListEntry, filters);
        if (matches && matched.length === limit) {
          anotherFollows = true;
          break;
        }
        if (matches) matched.push(position);
        lastRead = position;
      }
      startKey = result.LastEvaluatedKey;
      if (startKey === undefined && !anotherFollows) exhausted = true;
    }

    // The index is read eventually consistently: a transfer whose status moved on meanwhile is left out.
    const records = (await this.records(tenant, matched)).filter((record) =>
      matchesStatusFilter(record.status, filters),
    );
    const next = exhausted ? undefined : lastRead;
    if (!withTotal) return { records, ...(next && { next }) };
    // Having read to the end from the top, the page has seen every match: no count needed.
    if (exhausted && after === undefined) return { records, ...(next && { next }), total: matched.length };
    const { total, atLeast } = await this.count(choice, filters, top);
    return { records, ...(next && { next }), total, ...(atLeast && { totalIsLowerBound: true }) };
  }

  private query(
    { index, partition }: IndexChoice,
    purpose: 'listQuery' | 'listCount',
    page: { Limit?: number; after?: ListPosition; startKey?: Record<string, unknown>; upTo?: string },
    extra: Partial<QueryCommandInput> = {},
  ): Promise<Omit<QueryCommandOutput, '$metadata'>> {
    const bound =
      page.after !== undefined
        ? { condition: ' AND #order < :bound', value: listOrderKey(page.after) }
        : page.upTo !== undefined
          ? { condition: ' AND #order <= :bound', value: page.upTo }
          : undefined;
    return this.client
      .query({
        TableName: this.tableName,
        IndexName: index.indexName,
        KeyConditionExpression: `#partition = :partition${bound?.condition ?? ''}`,
        ExpressionAttributeNames: {
          '#partition': index.partitionKey,
          ...(bound && { '#order': index.sortKey }),
          ...extra.ExpressionAttributeNames,
        },
        ExpressionAttributeValues: { ':partition': partition, ...(bound && { ':bound': bound.value }) },
        // Newest first.
        ScanIndexForward: false,
        ...(page.Limit !== undefined && { Limit: page.Limit }),
        ...(page.startKey !== undefined && { ExclusiveStartKey: page.startKey }),
        ...(this.options.onCapacity && { ReturnConsumedCapacity: 'TOTAL' }),
        ...(extra.Select !== undefined && { Select: extra.Select }),
        ...(extra.ProjectionExpression !== undefined && {
          ProjectionExpression: extra.ProjectionExpression,
        }),
      })
      .then((result) => {
        this.options.onCapacity?.(purpose, result.ConsumedCapacity?.CapacityUnits ?? 0);
        return result;
      });
  }

  /**
   * Pagination-Total: the matches from the newest entry the page saw down to the oldest. With
   * only the index's own filter DynamoDB counts; otherwise the filter fields are read and
   * matched here, since amounts compare as exact decimals. At most `maxCounted` entries are read:
   * when more follow, the total is the matches counted so far, as a lower bound.
   */
  private async count(
    choice: IndexChoice,
    filters: ListFilters,
    top: string | undefined,
  ): Promise<{ total: number; atLeast: boolean }> {
    if (top === undefined) return { total: 0, atLeast: false };
    const bound = this.options.maxCounted ?? MAX_COUNTED_ENTRIES;
    const shape: Partial<QueryCommandInput> = choice.refines
      ? { ProjectionExpression: '#entry', ExpressionAttributeNames: { '#entry': LIST_ENTRY_ATTRIBUTE } }
      : { Select: 'COUNT' };
    let total = 0;
    let read = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await this.query(
        choice,
        'listCount',
        { upTo: top, Limit: bound - read, ...(startKey !== undefined && { startKey }) },
        shape,
      );
      read += result.Count ?? 0;
      total += choice.refines
        ? (result.Items ?? []).filter((item) =>
            matchesListFilters(item[LIST_ENTRY_ATTRIBUTE] as ListEntry, filters),
          ).length
        : (result.Count ?? 0);
      startKey = result.LastEvaluatedKey;
    } while (startKey !== undefined && read < bound);
    if (startKey === undefined) return { total, atLeast: false };
    // The bound was reached with a key to go on from: one entry more says whether any follow.
    const probe = await this.query(
      choice,
      'listCount',
      { upTo: top, Limit: 1, startKey },
      { Select: 'COUNT' },
    );
    return { total, atLeast: (probe.Count ?? 0) > 0 };
  }

  /**
   * The page's transfers from the table, in page order. Eventually consistent like the index
   * that found them (half the read units); the status operation is the strongly consistent read.
   */
  private async records(tenant: string, found: readonly ListPosition[]): Promise<CreditTransferRecord[]> {
    // Each transfer once: BatchGetItem refuses a key given twice, and an index torn by a killed
    // local table can hold two entries for one transfer.
    const positions = [...new Map(found.map((position) => [position.paymentId, position])).values()];
    if (positions.length === 0) return [];
    const byKey = new Map<string, CreditTransferRecord>();
    let keys: Record<string, unknown>[] = positions.map((position) => ({
      ...creditTransferKey(tenant, position.paymentId),
    }));
    for (let attempt = 0; keys.length > 0; attempt++) {
      if (attempt === BATCH_GET_ATTEMPTS) throw new Error(`BatchGetItem left ${keys.length} keys unread`);
      if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
      const result = await this.client.batchGet({
        RequestItems: { [this.tableName]: { Keys: keys } },
        ...(this.options.onCapacity && { ReturnConsumedCapacity: 'TOTAL' }),
      });
      const units = (result.ConsumedCapacity ?? []).reduce(
        (sum, entry) => sum + (entry.CapacityUnits ?? 0),
        0,
      );
      this.options.onCapacity?.('listBatchGet', units);
      for (const item of result.Responses?.[this.tableName] ?? []) {
        if (holdsCreditTransfer(item)) byKey.set(item.pk as string, fromCreditTransferItem(item));
      }
      keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return positions.flatMap((position) => {
      const record = byKey.get(creditTransferKey(tenant, position.paymentId).pk);
      return record ? [record] : [];
    });
  }
}

/**
 * A stored item with the list index values it lacks: a credit transfer stored before the list
 * (or its status index) existed.
 */
export const withListValues = (item: Record<string, unknown>): Record<string, unknown> => {
  if (item.type !== 'CreditTransfer') return item;
  const hasList = item[LIST_INDEXES.all.sortKey] !== undefined;
  const hasStatus = item[LIST_INDEXES.status.partitionKey] !== undefined;
  if (hasList && hasStatus) return item;
  const record = fromCreditTransferItem(item);
  return {
    ...item,
    ...(!hasList && creditTransferListValues(record.tenant, record, listEntryOf(record))),
    ...listStatusValues(record.tenant, record.status),
  };
};
