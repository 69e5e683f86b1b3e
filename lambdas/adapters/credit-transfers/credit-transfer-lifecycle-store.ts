import type { QueryCommandOutput, ScanCommandOutput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { CreditTransferStatus } from '#domain/credit-transfers/credit-transfer-status';
import { FINAL_STATUSES } from '#domain/credit-transfers/credit-transfer-status';
import { canTransition, IllegalStatusTransitionError } from '#domain/credit-transfers/lifecycle';
import type {
  CancellationRequest,
  CreditTransferRecord,
  LifecycleStore,
  ParkedMark,
  ParkedTransfers,
  RecoveryCandidate,
  RecoveryQueue,
  StatusTransition,
  SubmissionClaim,
} from '#domain/credit-transfers/ports';
import { statusReasonCodeOf } from '#domain/iso20022/status-codes';
import type { LimitHold } from '#domain/payment-controls/limits';
import { isConditionFailure } from '../aws/dynamodb-client.ts';
import {
  creditTransferKey,
  listStatusKey,
  PARKED_RECOVERY_KEY,
  parseCreditTransferKey,
  RECOVERY_SHARDS,
  recoveryIndexValues,
  recoveryShardKey,
} from '../table/keys.ts';
import { LIST_INDEXES, RECOVERY_INDEX } from '../table/table-definition.ts';
import { DynamoDbCreditTransferStore, fromCreditTransferItem } from './credit-transfer-store.ts';

/**
 * The lifecycle's writes to the credit transfer item and its recovery index values. Every
 * write is one conditional UpdateItem; a failed condition is an answer (someone else moved the
 * transfer first), not an error.
 */

const NAMES = {
  '#status': 'status',
  '#history': 'history',
  '#shard': RECOVERY_INDEX.partitionKey,
  '#due': RECOVERY_INDEX.sortKey,
};

const NAMES_WITHOUT_HISTORY = {
  '#status': NAMES['#status'],
  '#shard': NAMES['#shard'],
  '#due': NAMES['#due'],
};

const FINAL_VALUES = Object.fromEntries(
  [...FINAL_STATUSES].map((status, index) => [`:final${index}`, status]),
);
const FINAL_LIST = Object.keys(FINAL_VALUES).join(', ');

/** Runs a conditional write: true when it was made, false when its condition failed. */
const conditionally = async (write: () => Promise<unknown>): Promise<boolean> => {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};

/** The store's reads and creation, plus the lifecycle's conditional status changes and recovery queue. */
export class DynamoDbLifecycleStore
  extends DynamoDbCreditTransferStore
  implements LifecycleStore, RecoveryQueue, ParkedTransfers
{
  private recoveryValues(tenant: string, paymentId: string, dueAt: Date): Record<string, string> {
    const values = recoveryIndexValues(tenant, paymentId, dueAt.toISOString());
    return {
      ':shard': values[RECOVERY_INDEX.partitionKey] as string,
      ':due': values[RECOVERY_INDEX.sortKey] as string,
    };
  }

  /** A conditional update answering the record as it now is, or undefined when the condition failed. */
  private async updateRecord(
    input: Omit<UpdateCommandInput, 'ReturnValues'>,
  ): Promise<CreditTransferRecord | undefined> {
    try {
      const result = await this.client.update({ ...input, ReturnValues: 'ALL_NEW' });
      return result.Attributes ? fromCreditTransferItem(result.Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async transition(
    tenant: string,
    paymentId: string,
    {
      from,
      through = [],
      change,
      unlessCancellationRequested,
      submission,
      nextCheckAt,
      claimSubmission,
      publishedCount,
      whileParked,
      limits,
      approval,
    }: StatusTransition,
  ): Promise<CreditTransferRecord | undefined> {
    // A defect, not a race: refused before anything is written.
    let left = from;
    for (const { status: to } of [...through, change]) {
      if (!canTransition(left, to)) throw new IllegalStatusTransitionError(left, to);
      left = to;
    }
    if (claimSubmission !== undefined && (!unlessCancellationRequested || submission === 'claimed'))
      throw new Error('A submission is claimed only while no cancellation is requested and none is claimed');
    const hasReason = change.statusReason !== undefined;
    const movesCheck = nextCheckAt !== undefined;
    // The status, its history entries, the recovery entry and the bookkeeping: one conditional write.
    return this.updateRecord({
      TableName: this.tableName,
      Key: creditTransferKey(tenant, paymentId),
      UpdateExpression: [
        'SET #status = :to, statusDate = :date, #history = list_append(#history, :entries)',
        movesCheck ? ', #shard = :shard, #due = :due' : '',
        claimSubmission !== undefined ? ', submittedAt = :claimedAt, submissionClaim = :claim' : '',
        publishedCount !== undefined ? ', publishedCount = :published' : '',
        limits !== undefined ? ', limits = :limits' : '',
        approval !== undefined ? ', approval = :approval' : '',
        // The status index's key moves with the status, in the same conditional write.
        ', #listStatus = :listStatus',
        hasReason ? ', statusReason = :reason, statusReasonCode = :reasonCode' : '',
        // Moving on clears the count of stalled attempts, and ends a parking.
        ` REMOVE stalledAttempts, parked${hasReason ? '' : ', statusReason, statusReasonCode'}`,
      ].join(''),
      ConditionExpression: [
        '#status = :from',
        ...(whileParked ? ['attribute_exists(parked)'] : []),
        // A check left where it is must be one the reconciler reads: in a shard, not parked.
        ...(movesCheck ? [] : ['attribute_exists(#due) AND attribute_not_exists(parked)']),
        ...(unlessCancellationRequested ? ['attribute_not_exists(cancellation)'] : []),
        ...(submission === 'claimed' ? ['attribute_exists(submittedAt)'] : []),
        ...(submission === 'unclaimed' || claimSubmission !== undefined
          ? ['attribute_not_exists(submittedAt)']
          : []),
        ...(limits !== undefined ? ['limits.#limitState = :limitsFrom'] : []),
      ].join(' AND '),
      ExpressionAttributeNames: {
        '#status': NAMES['#status'],
        '#history': NAMES['#history'],
        '#due': NAMES['#due'],
        ...(movesCheck && { '#shard': NAMES['#shard'] }),
        '#listStatus': LIST_INDEXES.status.partitionKey,
        ...(limits !== undefined && { '#limitState': 'state' }),
      },
      ExpressionAttributeValues: {
        ':from': from,
        ':to': change.status,
        ':listStatus': listStatusKey(tenant, change.status),
        ':date': change.date,
        ':entries': [...through, change],
        ...(change.statusReason !== undefined && {
          ':reason': change.statusReason,
          ':reasonCode': statusReasonCodeOf(change.statusReason, change.statusReasonCode),
        }),
        ...(claimSubmission !== undefined && {
          ':claimedAt': claimSubmission.at.toISOString(),
          ':claim': claimSubmission.id,
        }),
        ...(publishedCount !== undefined && { ':published': publishedCount }),
        ...(limits !== undefined && { ':limits': limits.to, ':limitsFrom': limits.from }),
        ...(approval !== undefined && { ':approval': approval }),
        ...(movesCheck && this.recoveryValues(tenant, paymentId, nextCheckAt)),
      },
    });
  }

  async updateLimits(
    tenant: string,
    paymentId: string,
    from: LimitHold['state'] | { state: 'releasing'; since: string },
    to: LimitHold,
    nextCheckAt?: Date,
    status?: CreditTransferStatus,
  ): Promise<CreditTransferRecord | undefined> {
    const since = typeof from === 'string' ? undefined : from.since;
    return this.updateRecord({
      TableName: this.tableName,
      Key: creditTransferKey(tenant, paymentId),
      UpdateExpression: `SET limits = :limits${nextCheckAt ? ', #shard = :shard, #due = :due' : ''}`,
      ConditionExpression: [
        'limits.#limitState = :from',
        ...(since !== undefined ? ['limits.releasingSince = :since'] : []),
        ...(status !== undefined ? ['#status = :status'] : []),
        // A parked transfer keeps out of recovery: its check is not moved.
        ...(nextCheckAt ? ['attribute_not_exists(parked)'] : []),
      ].join(' AND '),
      ExpressionAttributeNames: {
        '#limitState': 'state',
        ...(status !== undefined && { '#status': NAMES['#status'] }),
        ...(nextCheckAt && { '#shard': NAMES['#shard'], '#due': NAMES['#due'] }),
      },
      ExpressionAttributeValues: {
        ':limits': to,
        ':from': typeof from === 'string' ? from : from.state,
        ...(since !== undefined && { ':since': since }),
        ...(status !== undefined && { ':status': status }),
        ...(nextCheckAt && this.recoveryValues(tenant, paymentId, nextCheckAt)),
      },
    });
  }

  async claimSubmission(
    tenant: string,
    paymentId: string,
    claim: SubmissionClaim,
  ): Promise<CreditTransferRecord | undefined> {
    // The same item as the cancellation request: whichever of the two is written first wins.
    return this.writeClaim(
      tenant,
      paymentId,
      claim,
      'attribute_not_exists(cancellation) AND attribute_not_exists(submittedAt)',
    );
  }

  async retakeSubmission(
    tenant: string,
    paymentId: string,
    claimedAt: string,
    claim: SubmissionClaim,
  ): Promise<CreditTransferRecord | undefined> {
    // Names the claim it replaces: of two that retake the same claim at once, one wins.
    return this.writeClaim(tenant, paymentId, claim, 'submittedAt = :claimedAt', { ':claimedAt': claimedAt });
  }

  /** Sets the submission claim while the transfer is AcceptedCustomerProfile and `condition` holds. */
  private writeClaim(
    tenant: string,
    paymentId: string,
    claim: SubmissionClaim,
    condition: string,
    values: Record<string, string> = {},
  ): Promise<CreditTransferRecord | undefined> {
    return this.updateRecord({
      TableName: this.tableName,
      Key: creditTransferKey(tenant, paymentId),
      UpdateExpression: 'SET submittedAt = :at, submissionClaim = :claim',
      ConditionExpression: `#status = :from AND ${condition}`,
      ExpressionAttributeNames: { '#status': NAMES['#status'] },
      ExpressionAttributeValues: {
        ':from': 'AcceptedCustomerProfile',
        ':at': claim.at.toISOString(),
        ':claim': claim.id,
        ...values,
      },
    });
  }

  async requestCancellation(
    tenant: string,
    paymentId: string,
    request: CancellationRequest,
    nextCheckAt: Date,
  ): Promise<CreditTransferRecord | undefined> {
    return this.updateRecord({
      TableName: this.tableName,
      Key: creditTransferKey(tenant, paymentId),
      // A parked transfer gets a new round of attempts: the cancellation is new work to try.
      UpdateExpression:
        'SET cancellation = :request, #shard = :shard, #due = :due REMOVE parked, stalledAttempts',
      ConditionExpression: `attribute_exists(pk) AND attribute_not_exists(cancellation) AND NOT (#status IN (${FINAL_LIST}))`,
      ExpressionAttributeNames: {
        '#status': NAMES['#status'],
        '#shard': NAMES['#shard'],
        '#due': NAMES['#due'],
      },
      ExpressionAttributeValues: {
        ':request': request,
        ...FINAL_VALUES,
        ...this.recoveryValues(tenant, paymentId, nextCheckAt),
      },
    });
  }

  async scheduleCheck(tenant: string, paymentId: string, nextCheckAt: Date): Promise<void> {
    // Only while the transfer is in the index: a finished one must not come back.
    await conditionally(() =>
      this.client.update({
        TableName: this.tableName,
        Key: creditTransferKey(tenant, paymentId),
        // Waiting for something known is progress: the count of stalled attempts starts again.
        UpdateExpression: 'SET #shard = :shard, #due = :due REMOVE stalledAttempts',
        ConditionExpression: 'attribute_exists(#due) AND attribute_not_exists(parked)',
        ExpressionAttributeNames: { '#shard': NAMES['#shard'], '#due': NAMES['#due'] },
        ExpressionAttributeValues: this.recoveryValues(tenant, paymentId, nextCheckAt),
      }),
    );
  }

  async markPublished(tenant: string, paymentId: string, count: number, final: boolean): Promise<boolean> {
    return conditionally(() =>
      this.client.update({
        TableName: this.tableName,
        Key: creditTransferKey(tenant, paymentId),
        UpdateExpression: `SET publishedCount = :count${final ? ' REMOVE #shard, #due, recoveryAttempt, stalledAttempts, parked' : ''}`,
        ConditionExpression: [
          'attribute_exists(pk) AND (attribute_not_exists(publishedCount) OR publishedCount <= :count)',
          // Leaves the index only when nothing can follow: final, and every change published.
          ...(final ? [`#status IN (${FINAL_LIST}) AND size(#history) = :count`] : []),
        ].join(' AND '),
        ExpressionAttributeNames: final ? NAMES : undefined,
        ExpressionAttributeValues: { ':count': count, ...(final && FINAL_VALUES) },
      }),
    );
  }

  async park(
    tenant: string,
    paymentId: string,
    status: CreditTransferStatus,
    mark: ParkedMark,
  ): Promise<boolean> {
    return conditionally(() =>
      this.client.update({
        TableName: this.tableName,
        Key: creditTransferKey(tenant, paymentId),
        UpdateExpression: 'SET parked = :mark, #shard = :parkedShard, #due = :at',
        ConditionExpression: '#status = :status AND attribute_exists(#due) AND attribute_not_exists(parked)',
        ExpressionAttributeNames: NAMES_WITHOUT_HISTORY,
        ExpressionAttributeValues: {
          ':mark': mark,
          ':parkedShard': PARKED_RECOVERY_KEY,
          ':at': mark.at,
          ':status': status,
        },
      }),
    );
  }

  async parked(limit: number): Promise<CreditTransferRecord[]> {
    const records: CreditTransferRecord[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page: Omit<QueryCommandOutput, '$metadata'> = await this.client.query({
        TableName: this.tableName,
        IndexName: RECOVERY_INDEX.indexName,
        KeyConditionExpression: '#shard = :shard',
        ExpressionAttributeNames: { '#shard': NAMES['#shard'] },
        ExpressionAttributeValues: { ':shard': PARKED_RECOVERY_KEY },
        Limit: Math.min(limit - records.length, 100),
        ExclusiveStartKey,
      });
      for (const item of page.Items ?? []) {
        const { tenant, paymentId } = parseCreditTransferKey(String(item.pk));
        // The index may lag the item: the item says whether it is parked.
        const record = await this.get(tenant, paymentId);
        if (record?.parked !== undefined) records.push(record);
      }
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey && records.length < limit);
    return records;
  }

  async countParked(): Promise<number> {
    let count = 0;
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page: Omit<QueryCommandOutput, '$metadata'> = await this.client.query({
        TableName: this.tableName,
        IndexName: RECOVERY_INDEX.indexName,
        KeyConditionExpression: '#shard = :shard',
        ExpressionAttributeNames: { '#shard': NAMES['#shard'] },
        ExpressionAttributeValues: { ':shard': PARKED_RECOVERY_KEY },
        Select: 'COUNT',
        ExclusiveStartKey,
      });
      count += page.Count ?? 0;
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return count;
  }

  async unpark(tenant: string, paymentId: string, dueAt: Date): Promise<boolean> {
    return conditionally(() =>
      this.client.update({
        TableName: this.tableName,
        Key: creditTransferKey(tenant, paymentId),
        UpdateExpression: 'SET #shard = :shard, #due = :due REMOVE parked, stalledAttempts',
        ConditionExpression: 'attribute_exists(parked)',
        ExpressionAttributeNames: { '#shard': NAMES['#shard'], '#due': NAMES['#due'] },
        ExpressionAttributeValues: this.recoveryValues(tenant, paymentId, dueAt),
      }),
    );
  }

  async due(before: Date | undefined, limit: number): Promise<RecoveryCandidate[]> {
    const perShard = await Promise.all(
      Array.from({ length: RECOVERY_SHARDS }, (_, shard) => this.dueInShard(shard, before, limit)),
    );
    return perShard
      .flat()
      .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0))
      .slice(0, limit);
  }

  private async dueInShard(
    shard: number,
    before: Date | undefined,
    limit: number,
  ): Promise<RecoveryCandidate[]> {
    const candidates: RecoveryCandidate[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page: Omit<QueryCommandOutput, '$metadata'> = await this.client.query({
        TableName: this.tableName,
        IndexName: RECOVERY_INDEX.indexName,
        KeyConditionExpression:
          before === undefined ? '#shard = :shard' : '#shard = :shard AND #due <= :before',
        ExpressionAttributeNames:
          before === undefined
            ? { '#shard': NAMES['#shard'] }
            : { '#shard': NAMES['#shard'], '#due': NAMES['#due'] },
        ExpressionAttributeValues: {
          ':shard': recoveryShardKey(shard),
          ...(before !== undefined && { ':before': before.toISOString() }),
        },
        Limit: Math.min(limit - candidates.length, 500),
        ExclusiveStartKey,
      });
      for (const item of page.Items ?? []) {
        const { tenant, paymentId } = parseCreditTransferKey(String(item.pk));
        candidates.push({ tenant, paymentId, dueAt: String(item[RECOVERY_INDEX.sortKey]) });
      }
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey && candidates.length < limit);
    return candidates;
  }

  async claim(candidate: RecoveryCandidate, nextCheckAt: Date): Promise<number | undefined> {
    try {
      const result = await this.client.update({
        TableName: this.tableName,
        Key: creditTransferKey(candidate.tenant, candidate.paymentId),
        UpdateExpression:
          'SET recoveryAttempt = if_not_exists(recoveryAttempt, :zero) + :one, stalledAttempts = if_not_exists(stalledAttempts, :zero) + :one, #due = :due',
        ConditionExpression: '#due = :seen',
        ExpressionAttributeNames: { '#due': NAMES['#due'] },
        ExpressionAttributeValues: {
          ':zero': 0,
          ':one': 1,
          ':seen': candidate.dueAt,
          ':due': nextCheckAt.toISOString(),
        },
        ReturnValues: 'UPDATED_NEW',
      });
      return Number(result.Attributes?.recoveryAttempt);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async defer(candidate: RecoveryCandidate, nextCheckAt: Date): Promise<boolean> {
    return conditionally(() =>
      this.client.update({
        TableName: this.tableName,
        Key: creditTransferKey(candidate.tenant, candidate.paymentId),
        UpdateExpression: 'SET #due = :due',
        ConditionExpression: '#due = :seen',
        ExpressionAttributeNames: { '#due': NAMES['#due'] },
        ExpressionAttributeValues: { ':seen': candidate.dueAt, ':due': nextCheckAt.toISOString() },
      }),
    );
  }

  async realign(now: Date): Promise<number> {
    const entries = new Map<string, RecoveryCandidate[]>();
    for (const entry of await this.due(undefined, Number.MAX_SAFE_INTEGER)) {
      const { pk } = creditTransferKey(entry.tenant, entry.paymentId);
      entries.set(pk, [...(entries.get(pk) ?? []), entry]);
    }
    let repaired = 0;
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page: Omit<ScanCommandOutput, '$metadata'> = await this.client.scan({
        TableName: this.tableName,
        ConsistentRead: true,
        FilterExpression: 'sk = :sk',
        ProjectionExpression: 'pk, #status, #history, publishedCount, #due, parked',
        ExpressionAttributeNames: {
          '#status': NAMES['#status'],
          '#history': NAMES['#history'],
          '#due': NAMES['#due'],
        },
        ExpressionAttributeValues: { ':sk': creditTransferKey('t', 'p').sk },
        ExclusiveStartKey,
      });
      for (const item of page.Items ?? []) {
        const pk = String(item.pk);
        const indexed = (entries.get(pk) ?? []).map((entry) => entry.dueAt);
        entries.delete(pk);
        if (item.status === undefined) {
          // What a stop between the two writes of dropEntryWithoutRecord left: an item holding
          // nothing but an index entry, deleted with it.
          await this.dropPlaceholder(pk);
          repaired += 1;
          continue;
        }
        // Parked: its one entry is in the parked partition, which the shards do not list.
        if (item.parked !== undefined) continue;
        const own = item[RECOVERY_INDEX.sortKey] as string | undefined;
        const history = (item.history ?? []) as unknown[];
        const needsWork =
          !FINAL_STATUSES.has(item.status) || Number(item.publishedCount ?? 0) < history.length;
        const agrees =
          own === undefined ? indexed.length === 0 && !needsWork : indexed.length === 1 && indexed[0] === own;
        if (agrees) continue;
        const { tenant, paymentId } = parseCreditTransferKey(pk);
        await this.realignOne(tenant, paymentId, own, indexed, needsWork ? now : undefined);
        repaired += 1;
      }
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    // Entries whose record is gone (its write was lost, the index's kept).
    for (const orphans of entries.values()) {
      for (const orphan of orphans) await this.dropEntryWithoutRecord(orphan);
      repaired += 1;
    }
    return repaired;
  }

  /**
   * An index entry only goes through a write of its item holding the same values, so each stray
   * entry is first adopted by the item, then the item is given its one entry (or none).
   */
  private async realignOne(
    tenant: string,
    paymentId: string,
    own: string | undefined,
    indexed: string[],
    dueAt: Date | undefined,
  ): Promise<void> {
    const key = creditTransferKey(tenant, paymentId);
    const setDue = async (from: string | undefined, to: string) => {
      await this.client.update({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'SET #shard = :shard, #due = :due',
        ConditionExpression: from === undefined ? 'attribute_not_exists(#due)' : '#due = :from',
        ExpressionAttributeNames: { '#shard': NAMES['#shard'], '#due': NAMES['#due'] },
        ExpressionAttributeValues: {
          ...this.recoveryValues(tenant, paymentId, new Date(to)),
          ':due': to,
          ...(from !== undefined && { ':from': from }),
        },
      });
    };
    let current = own;
    for (const stray of indexed.filter((entry) => entry !== own)) {
      await setDue(current, stray);
      current = stray;
    }
    if (dueAt !== undefined) {
      // A value the index has not seen, so the write is a move and leaves one entry.
      let due = dueAt;
      while (due.toISOString() === current) due = new Date(due.getTime() + 1);
      await setDue(current, due.toISOString());
    } else if (current !== undefined) {
      await this.client.update({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'REMOVE #shard, #due',
        ConditionExpression: '#due = :from',
        ExpressionAttributeNames: { '#shard': NAMES['#shard'], '#due': NAMES['#due'] },
        ExpressionAttributeValues: { ':from': current },
      });
    }
  }

  /** A leftover placeholder item: deleting it takes its index entry with it. */
  private async dropPlaceholder(pk: string): Promise<void> {
    const { tenant, paymentId } = parseCreditTransferKey(pk);
    await conditionally(() =>
      this.client.delete({
        TableName: this.tableName,
        Key: creditTransferKey(tenant, paymentId),
        ConditionExpression: 'attribute_not_exists(#status)',
        ExpressionAttributeNames: { '#status': NAMES['#status'] },
      }),
    );
  }

  /**
   * The table's index only loses an entry through a write of its item, so an entry whose item is
   * gone is dropped by writing a placeholder item holding it and deleting that. A stop between
   * the two leaves the placeholder, which the next realign deletes (see dropPlaceholder).
   */
  private async dropEntryWithoutRecord(entry: RecoveryCandidate): Promise<void> {
    const key = creditTransferKey(entry.tenant, entry.paymentId);
    await this.client.put({
      TableName: this.tableName,
      Item: { ...key, ...recoveryIndexValues(entry.tenant, entry.paymentId, entry.dueAt) },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    await this.client.delete({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: '#due = :due',
      ExpressionAttributeNames: { '#due': NAMES['#due'] },
      ExpressionAttributeValues: { ':due': entry.dueAt },
    });
  }
}
