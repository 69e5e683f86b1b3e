import { createHash, randomUUID } from 'node:crypto';

/**
 * A paymentId is a UUID. With an idempotency key it is derived from tenant and key, so the
 * one conditional write that stores the payment is also the write that claims the key.
 */
export const derivedPaymentId = (tenant: string, operation: string, idempotencyKey: string): string => {
  const digest = createHash('sha256').update(`${tenant}\u0000${operation}\u0000${idempotencyKey}`).digest();
  // RFC 9562 version 8 (custom) layout, so the id reads as any other UUID.
  digest[6] = ((digest[6] ?? 0) & 0x0f) | 0x80;
  digest[8] = ((digest[8] ?? 0) & 0x3f) | 0x80;
  const hex = digest.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

export const randomPaymentId = (): string => randomUUID();
