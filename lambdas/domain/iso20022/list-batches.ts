import * as z from 'zod/mini';
import { fingerprint } from '../commons/canonical-json.ts';
import { InvalidRequestError } from '../commons/errors.ts';
import { signPositionCursor, verifyPositionCursor } from '../commons/position-cursor.ts';
import { limitOf, pagingParameters, parseQuery } from '../commons/query-parameters.ts';
import { atMostCharacters, boundedText, optionalField } from '../commons/text.ts';
import { type BatchView, batchViewOf } from './batch-view.ts';
import type { BatchRecord } from './ports.ts';

const timestamp = () => z.iso.datetime().check(atMostCharacters(35));

/** GET /v1/payments/credit-transfer-batches: the tenant's batches, newest first. */
export const listBatchesQuerySchema = z.strictObject({
  'messageId.eq': optionalField(
    boundedText(1, 35),
    "Only the batch of this message: a pain.001's `GrpHdr/MsgId`, or a JSON batch's `messageId`.",
  ),
  'createdAt.gte': optionalField(timestamp(), 'Only batches accepted at or after this time (ISO 8601).'),
  'createdAt.lte': optionalField(timestamp(), 'Only batches accepted at or before this time (ISO 8601).'),
  ...pagingParameters('batches'),
});

/** A place in the batches' order: acceptance time, then batchId (both descending). */
export interface BatchPosition {
  createdAt: string;
  batchId: string;
}

export interface BatchPageRequest {
  tenant: string;
  /** Inclusive bounds of `createdAt` (ISO 8601 UTC with milliseconds). */
  from?: string;
  to?: string;
  /** Exclusive: the page starts after this batch. */
  after?: BatchPosition;
  limit: number;
}

export interface BatchList {
  /** One page by the tenant's index, newest first; `next` when more may follow. */
  page(request: BatchPageRequest): Promise<{ batches: BatchRecord[]; next?: BatchPosition }>;
  /** The tenant's batch of this message id (its claim, or a JSON batch's own id), or undefined. */
  byMessageId(tenant: string, messageId: string): Promise<BatchRecord | undefined>;
}

export interface ListBatchesDependencies {
  batches: BatchList;
  cursorKey: () => Promise<Uint8Array>;
}

const LIST = 'batches';

const positionText = (position: BatchPosition) => `${position.createdAt}#${position.batchId}`;
const positionOf = (text: string): BatchPosition => {
  const [createdAt, batchId] = text.split('#');
  if (createdAt === undefined || batchId === undefined) throw new Error(`Not a batch position: ${text}`);
  return { createdAt, batchId };
};

export const listBatches = async (
  { batches, cursorKey }: ListBatchesDependencies,
  tenant: string,
  parameters: Readonly<Record<string, readonly string[]>>,
): Promise<{ batches: BatchView[]; nextCursor: string }> => {
  const { cursor, limit, ...filters } = parseQuery(listBatchesQuerySchema, parameters);
  const filtersKey = fingerprint(filters).slice(0, 22);
  const after =
    cursor === undefined
      ? undefined
      : positionOf(verifyPositionCursor(await cursorKey(), LIST, tenant, cursor, filtersKey));
  const from = filters['createdAt.gte'] && new Date(filters['createdAt.gte']).toISOString();
  const to = filters['createdAt.lte'] && new Date(filters['createdAt.lte']).toISOString();
  if (from !== undefined && to !== undefined && from > to)
    throw new InvalidRequestError('A query parameter is not valid', [
      { name: 'createdAt.gte', reason: 'must not be after createdAt.lte' },
    ]);
  const messageId = filters['messageId.eq'];
  if (messageId !== undefined) {
    // A message id names at most one batch of the tenant: its only page.
    const batch = await batches.byMessageId(tenant, messageId);
    const within =
      batch !== undefined &&
      (from === undefined || batch.createdAt >= from) &&
      (to === undefined || batch.createdAt <= to);
    return { batches: within ? [batchViewOf(batch)] : [], nextCursor: '' };
  }
  const page = await batches.page({
    tenant,
    ...(from !== undefined && { from }),
    ...(to !== undefined && { to }),
    ...(after !== undefined && { after }),
    limit: limitOf(limit),
  });
  return {
    batches: page.batches.map(batchViewOf),
    nextCursor:
      page.next === undefined
        ? ''
        : signPositionCursor(await cursorKey(), LIST, tenant, positionText(page.next), filtersKey),
  };
};
