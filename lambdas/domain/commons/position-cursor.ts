import { createHmac } from 'node:crypto';
import * as z from 'zod/mini';
import { invalidCursor, signedPayload } from './cursor.ts';
import { boundedText } from './text.ts';

/**
 * The cursor of the lists that page by one position (webhook endpoints, events): the position
 * after which the next page starts and the filter set it belongs to, signed with HMAC-SHA256
 * under the list cursor secret (cursor.ts). The signature covers the tenant and the list's name,
 * so a cursor is worthless to another tenant or on another list, and cannot be edited or forged.
 */
const VERSION = 1;

const payloadSchema = z.strictObject({
  v: z.literal(VERSION),
  p: boundedText(1, 200),
  f: boundedText(1, 64),
});

const mac = (key: Uint8Array, list: string, tenant: string, payload: string): Buffer =>
  createHmac('sha256', key)
    .update(`credit-transfers/${list}-cursor/v${VERSION}\n${tenant}\n${payload}`)
    .digest();

export const signPositionCursor = (
  key: Uint8Array,
  list: string,
  tenant: string,
  position: string,
  filters: string,
): string => {
  const payload = Buffer.from(JSON.stringify({ v: VERSION, p: position, f: filters })).toString('base64url');
  return `${payload}.${mac(key, list, tenant, payload).toString('base64url')}`;
};

/** The position of a cursor this service issued on this list to this tenant for these filters; else a 400 naming `cursor`. */
export const verifyPositionCursor = (
  key: Uint8Array,
  list: string,
  tenant: string,
  cursor: string,
  filters: string,
): string => {
  const payload = signedPayload(
    cursor,
    (signed) => mac(key, list, tenant, signed),
    'is not a cursor this service issued to this client for this list, or it was changed',
  );
  let content: z.infer<typeof payloadSchema>;
  try {
    content = payloadSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    throw invalidCursor('has expired; start again from the first page');
  }
  if (content.f !== filters) {
    throw invalidCursor('was issued for other filters; send the filters of the first page with it');
  }
  return content.p;
};
