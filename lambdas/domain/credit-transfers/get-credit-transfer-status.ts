import { createHash } from 'node:crypto';
import { PaymentNotFoundError } from '../commons/errors.ts';
import { parseOrThrow } from '../commons/validation.ts';
import { type CreditTransfer, paymentIdSchema } from './credit-transfer.ts';
import { toCreditTransfer } from './credit-transfer-view.ts';
import { isFinal } from './lifecycle.ts';
import type { CreditTransferRecord, CreditTransferStore } from './ports.ts';

/** Seconds a client should wait before asking again about a transfer that is not final yet. */
export const POLL_AFTER_SECONDS = 5;

export interface StatusQuery {
  tenant: string;
  paymentId: string | undefined;
  /** The `If-None-Match` header as sent (every value, comma-joined), or undefined. */
  ifNoneMatch?: string | undefined;
  /** Another representation of the report than its JSON (the pain.002); the tag names what is sent. */
  render?: (creditTransfer: CreditTransfer, record: CreditTransferRecord) => string;
}

export type StatusReport =
  | {
      changed: true;
      creditTransfer: CreditTransfer;
      /** The body the tag names (JSON, or what `render` made): byte for byte what the client receives. */
      body: string;
      etag: string;
      final: boolean;
    }
  /** The client's copy is current: answer 304 with the tag and no body. */
  | { changed: false; etag: string; final: boolean };

/**
 * A strong entity tag of the status report: a digest of the exact body, so it changes with
 * every status change (status, reason and date are in the body) and names one representation.
 */
export const entityTagOf = (body: string): string =>
  `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

const opaqueTag = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);

/**
 * RFC 9110 13.1.2: If-None-Match fails (the client's copy is current) when it is `*` or lists
 * the current tag, compared weakly. An unreadable header is ignored, as the RFC allows.
 */
export const matchesIfNoneMatch = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false;
  const value = header.trim();
  if (value === '*') return true;
  const tags = value.match(/(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"/g) ?? [];
  return tags.some((tag) => opaqueTag(tag) === opaqueTag(etag));
};

export const getCreditTransferStatus = async (
  { store }: { store: CreditTransferStore },
  query: StatusQuery,
): Promise<StatusReport> => {
  const paymentId = parseOrThrow(paymentIdSchema, query.paymentId, 'The paymentId is not valid', [
    'paymentId',
  ]);
  const record = await store.get(query.tenant, paymentId);
  // Another tenant's payment is answered exactly like an unknown one, whatever tag is sent.
  if (record === undefined) throw new PaymentNotFoundError(paymentId);
  const creditTransfer = toCreditTransfer(record);
  const body = query.render ? query.render(creditTransfer, record) : JSON.stringify(creditTransfer);
  const etag = entityTagOf(body);
  const final = isFinal(record.status);
  if (matchesIfNoneMatch(query.ifNoneMatch, etag)) return { changed: false, etag, final };
  return { changed: true, creditTransfer, body, etag, final };
};
