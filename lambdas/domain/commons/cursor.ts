import { createHmac, timingSafeEqual } from 'node:crypto';
import * as z from 'zod/mini';
import { InvalidRequestError } from './errors.ts';
import { boundedText } from './text.ts';

/**
 * The list cursor: where the next page starts, the total counted when paging began, and the
 * filter set it belongs to, signed with HMAC-SHA256 under a server secret. The signature covers
 * the tenant too, so a cursor is worthless to another tenant and cannot be edited or forged.
 * Clients treat it as opaque; its content is readable but carries nothing of another tenant.
 */

/** A place in the list order: newest first by initiation time, then by paymentId descending. */
export interface ListPosition {
  createdAt: string;
  paymentId: string;
}

export interface CursorContent {
  /** The last transfer the previous page read (returned or skipped by a filter). */
  after: ListPosition;
  /** Pagination-Total as counted on the first page. */
  total: number;
  /** The count stopped at its bound: `total` is a lower bound. */
  totalIsLowerBound?: boolean;
  /** filtersFingerprint of the filters the cursor was issued for. */
  filters: string;
}

/** Bumped when the content changes shape: older cursors then fail as unknown. */
const VERSION = 1;
const CONTEXT = 'credit-transfers/list-cursor';

const payloadSchema = z.strictObject({
  v: z.literal(VERSION),
  a: z.tuple([z.iso.datetime(), boundedText(1, 36)]),
  t: z.int().check(z.gte(0)),
  l: z.optional(z.literal(1)),
  f: boundedText(1, 64),
});

const BASE64URL = /^[A-Za-z0-9_-]+$/;

const mac = (key: Uint8Array, tenant: string, payload: string): Buffer =>
  createHmac('sha256', key).update(`${CONTEXT}/v${VERSION}\n${tenant}\n${payload}`).digest();

export const invalidCursor = (reason: string) =>
  new InvalidRequestError('The cursor is not valid for this request', [{ name: 'cursor', reason }]);

/**
 * The payload of `cursor` once its form and its signature (`macOf` the payload) are checked; else
 * a 400 naming `cursor`, with `forged` as the reason when the signature does not match. Compared as
 * text: base64url leaves spare bits in the last character, so decoded bytes would let a changed
 * cursor through.
 */
export const signedPayload = (cursor: string, macOf: (payload: string) => Buffer, forged: string): string => {
  const [payload, signature, ...rest] = cursor.split('.');
  if (
    payload === undefined ||
    signature === undefined ||
    rest.length > 0 ||
    !BASE64URL.test(payload) ||
    !BASE64URL.test(signature)
  ) {
    throw invalidCursor('is not a cursor this service issued');
  }
  const expected = Buffer.from(macOf(payload).toString('base64url'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor(forged);
  return payload;
};

export const signCursor = (key: Uint8Array, tenant: string, content: CursorContent): string => {
  const payload = Buffer.from(
    JSON.stringify({
      v: VERSION,
      a: [content.after.createdAt, content.after.paymentId],
      t: content.total,
      ...(content.totalIsLowerBound && { l: 1 }),
      f: content.filters,
    }),
  ).toString('base64url');
  return `${payload}.${mac(key, tenant, payload).toString('base64url')}`;
};

/**
 * The content of a cursor this service issued to this tenant for these filters. Anything else
 * (edited, forged, another tenant's, issued for other filters) is a 400 naming `cursor`.
 */
export const verifyCursor = (
  key: Uint8Array,
  tenant: string,
  cursor: string,
  filters: string,
): CursorContent => {
  const payload = signedPayload(
    cursor,
    (signed) => mac(key, tenant, signed),
    'is not a cursor this service issued to this client, or it was changed',
  );
  let content: z.infer<typeof payloadSchema>;
  try {
    content = payloadSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    // Signed by this service but not readable: a cursor of another version.
    throw invalidCursor('has expired; start again from the first page');
  }
  if (content.f !== filters) {
    throw invalidCursor('was issued for other filters; send the filters of the first page with it');
  }
  return {
    after: { createdAt: content.a[0], paymentId: content.a[1] },
    total: content.t,
    ...(content.l === 1 && { totalIsLowerBound: true }),
    filters: content.f,
  };
};
