import { createHash } from 'node:crypto';
import { CLIENT_ID_PATTERN } from '#domain/access/client';
import type { ListPosition } from '#domain/commons/cursor';
import type { CreditTransferStatus } from '#domain/credit-transfers/credit-transfer-status';
import type { ListEntry } from '#domain/credit-transfers/list-filters';
import type { LimitCounterKey } from '#domain/payment-controls/limits';
import { LIST_ENTRY_ATTRIBUTE, LIST_INDEXES, RECOVERY_INDEX } from './table-definition.ts';

/**
 * Every key value of the single table is built here. Each kind of item has a partition-key prefix
 * of its own (payments, their list partitions, webhook endpoints with their secrets, events,
 * deliveries, clients...), so an IAM grant (`dynamodb:LeadingKeys`) names exactly the kinds a
 * function touches. Tenants match TENANT_ID_PATTERN (#domain/access/client: no '#'), so a tenant can never be forged by
 * an id that follows it.
 */
export interface TableKey {
  pk: string;
  sk: string;
}

export const creditTransferKey = (tenant: string, paymentId: string): TableKey => ({
  pk: `PAYMENT#${tenant}#${paymentId}`,
  sk: 'CREDIT_TRANSFER',
});

/** A batch of credit transfers (a kind of its own, so its grant can name it apart). */
export const batchKey = (tenant: string, batchId: string): TableKey => ({
  pk: `BATCH#${tenant}#${batchId}`,
  sk: 'BATCH',
});

/** The claim of a pain.001's GrpHdr/MsgId by a tenant: any text may follow the tenant, which has no '#'. */
export const batchMessageKey = (tenant: string, messageId: string): TableKey => ({
  pk: `BATCH_MESSAGE#${tenant}#${messageId}`,
  sk: 'BATCH_MESSAGE',
});

/**
 * A tenant's batches in the list index (the transfers' `listByTenant`, overloaded under a prefix
 * of its own): newest first by `<createdAt>#<batchId>`.
 */
export const batchListKey = (tenant: string): string => `BATCH_LIST#${tenant}`;
export const batchListValues = (
  tenant: string,
  createdAt: string,
  batchId: string,
): Record<string, string> => ({
  [LIST_INDEXES.all.partitionKey]: batchListKey(tenant),
  [LIST_INDEXES.all.sortKey]: `${createdAt}#${batchId}`,
});

export const clientKey = (clientId: string): TableKey => ({
  pk: `CLIENT#${clientId}`,
  sk: 'CLIENT',
});

/**
 * List index values (LIST_INDEXES), under a prefix of their own (only the list route queries
 * them). Each partition is one tenant's, so no query can reach another tenant's transfers; an
 * account id follows a fixed label, so it cannot forge one.
 */
export const listTenantKey = (tenant: string): string => `PAYMENT_LIST#${tenant}#ALL`;
export const listDebtorAccountIdKey = (tenant: string, accountId: string): string =>
  `PAYMENT_LIST#${tenant}#DEBTOR_ACCOUNT_ID#${accountId}`;
export const listCreditorAccountIdKey = (tenant: string, accountId: string): string =>
  `PAYMENT_LIST#${tenant}#CREDITOR_ACCOUNT_ID#${accountId}`;
export const listCreditorAccountNumberKey = (tenant: string, accountNumber: string): string =>
  `PAYMENT_LIST#${tenant}#CREDITOR_ACCOUNT_NUMBER#${accountNumber}`;
export const listEndToEndIdKey = (tenant: string, endToEndId: string): string =>
  `PAYMENT_LIST#${tenant}#END_TO_END_ID#${endToEndId}`;
export const listInstructionIdKey = (tenant: string, instructionId: string): string =>
  `PAYMENT_LIST#${tenant}#INSTRUCTION_ID#${instructionId}`;
export const listBatchKey = (tenant: string, batchId: string): string =>
  `PAYMENT_LIST#${tenant}#BATCH#${batchId}`;
/** The status index's partition: one per tenant and status, moved by every status change. */
export const listStatusKey = (tenant: string, status: CreditTransferStatus): string =>
  `PAYMENT_LIST#${tenant}#STATUS#${status}`;

/** The status index attribute for a transfer in `status`: to be set by every write that sets the status. */
export const listStatusValues = (tenant: string, status: CreditTransferStatus): Record<string, string> => ({
  [LIST_INDEXES.status.partitionKey]: listStatusKey(tenant, status),
});

/**
 * The list order: initiation time (ISO 8601 UTC with milliseconds, fixed width, so text order is
 * time order), then paymentId. Read backwards, it is newest first, ties by paymentId descending.
 */
export const listOrderKey = (position: ListPosition): string => `${position.createdAt}#${position.paymentId}`;

export const listPositionOf = (order: string): ListPosition => {
  const separator = order.indexOf('#');
  if (separator < 0) throw new Error(`Not a list order value: ${order}`);
  return { createdAt: order.slice(0, separator), paymentId: order.slice(separator + 1) };
};

/**
 * The list index attributes of a credit transfer: the keys of every list index it belongs to
 * (the creditor ones only when the transfer names that creditor field: sparse) and its filter fields.
 */
export const creditTransferListValues = (
  tenant: string,
  position: ListPosition,
  entry: ListEntry,
): Record<string, unknown> => {
  return {
    [LIST_INDEXES.all.sortKey]: listOrderKey(position),
    [LIST_INDEXES.all.partitionKey]: listTenantKey(tenant),
    [LIST_INDEXES.debtorAccountId.partitionKey]: listDebtorAccountIdKey(tenant, entry.debtorAccountId),
    ...(entry.creditorAccountId !== undefined && {
      [LIST_INDEXES.creditorAccountId.partitionKey]: listCreditorAccountIdKey(
        tenant,
        entry.creditorAccountId,
      ),
    }),
    ...(entry.creditorAccountNumber !== undefined && {
      [LIST_INDEXES.creditorAccountNumber.partitionKey]: listCreditorAccountNumberKey(
        tenant,
        entry.creditorAccountNumber,
      ),
    }),
    ...(entry.endToEndId !== undefined && {
      [LIST_INDEXES.endToEndId.partitionKey]: listEndToEndIdKey(tenant, entry.endToEndId),
    }),
    ...(entry.instructionId !== undefined && {
      [LIST_INDEXES.instructionId.partitionKey]: listInstructionIdKey(tenant, entry.instructionId),
    }),
    ...(entry.batchId !== undefined && {
      [LIST_INDEXES.batchId.partitionKey]: listBatchKey(tenant, entry.batchId),
    }),
    [LIST_ENTRY_ATTRIBUTE]: entry,
  };
};

const LIST_ATTRIBUTES: ReadonlySet<string> = new Set([
  LIST_ENTRY_ATTRIBUTE,
  ...Object.values(LIST_INDEXES).flatMap((index) => [index.partitionKey, index.sortKey]),
]);

/** An item's attributes without the list index values, which are no part of the record. */
export const withoutListValues = (item: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(item).filter(([name]) => !LIST_ATTRIBUTES.has(name)));

/**
 * Recovery index values (RECOVERY_INDEX): set while a transfer is not final or not fully
 * published, removed afterwards (sparse). The partition is one of RECOVERY_SHARDS, picked by a
 * hash of the transfer, so no single partition takes every write; the sort key is the due time
 * (ISO 8601 UTC with milliseconds: text order is time order).
 */
export const RECOVERY_SHARDS = 8;

export const recoveryShardKey = (shard: number): string => `RECOVERY#${shard}`;

/**
 * The recovery index partition of parked transfers (sorted by when they were parked): under the
 * recovery prefix, never one of the shards the reconciler reads, so a parked transfer is listed
 * for an operator and driven by nothing.
 */
export const PARKED_RECOVERY_KEY = 'RECOVERY#PARKED';

export const recoveryShardOf = (tenant: string, paymentId: string): number =>
  createHash('sha256').update(`${tenant}\u0000${paymentId}`).digest().readUInt8(0) % RECOVERY_SHARDS;

export const recoveryIndexValues = (
  tenant: string,
  paymentId: string,
  dueAt: string,
): Record<string, string> => ({
  [RECOVERY_INDEX.partitionKey]: recoveryShardKey(recoveryShardOf(tenant, paymentId)),
  [RECOVERY_INDEX.sortKey]: dueAt,
});

/** Tenant and paymentId back from a credit transfer's partition key. */
export const parseCreditTransferKey = (pk: string): { tenant: string; paymentId: string } => {
  const match = /^PAYMENT#([^#]+)#(.+)$/.exec(pk);
  if (!match?.[1] || !match[2]) throw new Error(`Not a credit transfer key: ${pk}`);
  return { tenant: match[1], paymentId: match[2] };
};

/** The sandbox rail's clearing record of one payment. */
export const sandboxClearingKey = (tenant: string, paymentId: string): TableKey => ({
  pk: `SANDBOX_CLEARING#${tenant}#${paymentId}`,
  sk: 'CLEARING',
});

const hashed = (value: string): string => `sha256:${createHash('sha256').update(value).digest('base64url')}`;

/** An IPv4 or IPv6 address as API Gateway or Node gives it; anything else is counted under its hash. */
const SOURCE_ADDRESS_PATTERN = /^[0-9A-Fa-f:.]{2,45}$/;

/**
 * The failed-authentication count of one client id (known or not) from one source address, in a
 * partition of its own (never the client's: the token function may write THROTTLE# keys but never a
 * client record, and its grant names no other prefix).
 * An id no client can have (outside CLIENT_ID_PATTERN, which has no ':' or '#') and an address that
 * is not one are counted under their hashes, so nothing sent can reach another key or make one long.
 */
export const authenticationFailuresKey = (caller: { clientId: string; sourceAddress: string }): TableKey => ({
  pk: `THROTTLE#${CLIENT_ID_PATTERN.test(caller.clientId) ? caller.clientId : hashed(caller.clientId)}`,
  sk: `SOURCE#${SOURCE_ADDRESS_PATTERN.test(caller.sourceAddress) ? caller.sourceAddress : hashed(caller.sourceAddress)}`,
});

/**
 * The secret checks one source address spent in one window (`window`: epoch seconds divided by
 * the window's length). Under the throttle's prefix (its grant covers it); `ADDRESS#` holds a `#`,
 * which no client id, nor the hash that stands for one, has, so it never meets a client's count.
 */
export const secretCheckBudgetKey = (sourceAddress: string, window: number): TableKey => ({
  pk: `THROTTLE#ADDRESS#${SOURCE_ADDRESS_PATTERN.test(sourceAddress) ? sourceAddress : hashed(sourceAddress)}`,
  sk: `WINDOW#${window}`,
});

/**
 * A used jti (RFC 7523 client assertions, RFC 9449 DPoP proofs), kept until the JWT it came from
 * would expire. Each kind has its own prefix (the token function writes both, the authorizer only
 * proofs'); the partition is a hash of the key's owner (client id or key thumbprint) and the jti,
 * so any jti sent stays a short key and writes spread over partitions.
 */
export const usedJtiKey = (kind: 'assertion' | 'dpop', owner: string, jti: string): TableKey => ({
  pk: `${kind === 'assertion' ? 'ASSERTION_JTI' : 'DPOP_JTI'}#${hashed(`${owner}\u0000${jti}`)}`,
  sk: 'JTI',
});

/**
 * A tenant's payment controls, one item per version in one partition (sk `VERSION#` and the
 * number, zero-padded so text order is number order): the newest is the current document.
 */
export const paymentControlsPartition = (tenant: string): string => `PAYMENT_CONTROLS#${tenant}`;
export const PAYMENT_CONTROLS_VERSION_PREFIX = 'VERSION#';
export const paymentControlsVersionKey = (tenant: string, version: number): TableKey => ({
  pk: paymentControlsPartition(tenant),
  sk: `${PAYMENT_CONTROLS_VERSION_PREFIX}${String(version).padStart(10, '0')}`,
});

/** The signing key schedule (AWS): which KMS key signs, and which the key set publishes. */
export const signingKeyScheduleKey = (): TableKey => ({ pk: 'SIGNING_KEYS', sk: 'SCHEDULE' });
/**
 * Webhooks, three kinds under three prefixes. A tenant's endpoints, with their sealed secrets,
 * share one partition (listed by id, which sorts by creation); each endpoint's deliveries and
 * attempts share another; each event has its own (a transfer's events are named by its history,
 * for `paymentId.eq`). WEBHOOK_INDEX orders a tenant's events, and each endpoint's queued
 * deliveries in a partition of the endpoint's own (webhookDueKey).
 */
export const webhookEndpointKey = (tenant: string, endpointId: string): TableKey => ({
  pk: `WEBHOOK_ENDPOINT#${tenant}`,
  sk: `ENDPOINT#${endpointId}`,
});
/**
 * The ids of a tenant's endpoints with their creation times, in the endpoints' partition: a
 * creation adds its id by a conditional write that holds the limit, so parallel creations cannot
 * pass it (sorts before every `ENDPOINT#` key, so no endpoint page reaches it).
 */
export const webhookEndpointAllocationKey = (tenant: string): TableKey => ({
  pk: `WEBHOOK_ENDPOINT#${tenant}`,
  sk: 'ALLOCATION',
});
export const webhookDeliveryKey = (tenant: string, endpointId: string, eventId: string): TableKey => ({
  pk: `DELIVERY#${tenant}#${endpointId}`,
  sk: `DELIVERY#${eventId}`,
});
export const webhookAttemptKey = (
  tenant: string,
  endpointId: string,
  attemptedAt: string,
  eventId: string,
): TableKey => ({
  pk: `DELIVERY#${tenant}#${endpointId}`,
  sk: `ATTEMPT#${attemptedAt}#${eventId}`,
});
export const webhookEventKey = (tenant: string, eventId: string): TableKey => ({
  pk: `EVENT#${tenant}#ID#${eventId}`,
  sk: 'EVENT',
});
/** Index partition of a tenant's events; the order is `<createdAt>#<eventId>`. */
export const eventsIndexKey = (tenant: string): string => `EVENT#${tenant}#ALL`;
export const eventOrder = (createdAt: string, eventId: string): string => `${createdAt}#${eventId}`;
/**
 * The queued deliveries of one endpoint, in WEBHOOK_INDEX by due time: each endpoint's queue is
 * read on its own, so one endpoint's backlog never stands in front of another's due work.
 */
export const webhookDueKey = (tenant: string, endpointId: string): string =>
  `WEBHOOK_DUE#${tenant}#${endpointId}`;
/**
 * The endpoints that may have queued deliveries: each one's queue marker (webhookQueueMarkerKey)
 * is in this WEBHOOK_INDEX partition, ordered by tenant, so a look at the queue starts from it.
 */
export const WEBHOOK_DUE_QUEUES = 'WEBHOOK_DUE#QUEUES';
export const webhookQueueOrder = (tenant: string, endpointId: string): string => `${tenant}#${endpointId}`;
/** The queue marker of an endpoint, in its deliveries' partition (sorts apart from `ATTEMPT#` and `DELIVERY#`). */
export const webhookQueueMarkerKey = (tenant: string, endpointId: string): TableKey => ({
  pk: `DELIVERY#${tenant}#${endpointId}`,
  sk: 'QUEUE',
});
/**
 * Before per-endpoint queues, deliveries were queued in these WEBHOOK_INDEX partitions (a hash of
 * the endpoint): read until they are empty, and a delivery claimed from one moves to its
 * endpoint's queue.
 */
export const LEGACY_WEBHOOK_DUE_SHARDS = 4;
export const legacyWebhookDueShardKey = (shard: number): string => `WEBHOOK_DUE#${shard}`;
/** Where the local runtime has read the events file up to. */
export const localEventBusOffsetKey = (): TableKey => ({ pk: 'LOCAL_EVENT_BUS', sk: 'OFFSET' });

/**
 * A limit counter: one partition per tenant and debtor account (the tenant has no '#', so the
 * account after it cannot forge another's), one item per currency and calendar period.
 */
export const limitCounterKey = ({
  tenant,
  debtorAccountId,
  currency,
  period,
  start,
}: LimitCounterKey): TableKey => ({
  pk: `LIMIT_USAGE#${tenant}#${debtorAccountId}`,
  sk: `${currency}#${period}#${start}`,
});
