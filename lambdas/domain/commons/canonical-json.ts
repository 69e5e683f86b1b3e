import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so equal values give equal text whatever the key order. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, nested: unknown) =>
    nested !== null && typeof nested === 'object' && !Array.isArray(nested)
      ? Object.fromEntries(Object.entries(nested).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : nested,
  );

export const fingerprint = (value: unknown): string =>
  createHash('sha256').update(canonicalJson(value)).digest('hex');
