import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fullCreditTransfer, minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * The idempotency match covers every part of a request that changes a payment's meaning: each
 * value of the body (every leaf, at any depth) and the servicer headers. The same key with any
 * one of them changed is 422 and pays nothing; the same request in another key order replays.
 */
// Statuses hold still: a cancellation is always still possible.
const service = useLocalService({ env: { LOCAL_LIFECYCLE: 'off' }, token: true });

const TRANSFERS = '/v1/payments/credit-transfers';
const SERVICER = { servicerId: 'BANK-1', servicerBranchId: 'BRANCH-1' };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

const initiate = (body: unknown, key: string, headers: Record<string, string> = SERVICER) =>
  callApi(service.baseUrl, TRANSFERS, {
    token: service.token,
    body,
    headers: { idempotencyId: key, ...headers },
  });

const storedCount = async (): Promise<number> => {
  const reply = await callApi(service.baseUrl, `${TRANSFERS}?limit=1`, { token: service.token });
  return Number(reply.headers.get('pagination-total'));
};

/** Every leaf of a JSON value, by path. */
const leaves = (value: Json, path: Path = []): Path[] => {
  if (Array.isArray(value)) return value.flatMap((item, index) => leaves(item, [...path, index]));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => leaves(item, [...path, key]));
  return [path];
};

const withLeaf = (value: Json, path: Path, leaf: Json): Json => {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<
    string | number,
    Json
  >;
  copy[head as string] = withLeaf(copy[head as string] as Json, rest, leaf);
  return copy as Json;
};

const leafAt = (value: Json, path: Path): Json =>
  path.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key as string] as Json, value);

/** Other values for a leaf, most likely valid first: the test uses the first the schema accepts. */
const variants = (leaf: Json): Json[] => {
  if (typeof leaf === 'boolean') return [!leaf];
  if (typeof leaf === 'number') return [leaf + 1, leaf - 1];
  if (typeof leaf !== 'string') return [];
  // ISO 4217 and 3166 codes: only another real code is valid.
  const otherCode: Record<string, string> = { USD: 'EUR', EUR: 'USD', US: 'GB', GB: 'US' };
  const found: string[] = otherCode[leaf] === undefined ? [] : [otherCode[leaf]];
  const digit = /\d/.exec(leaf);
  if (digit) {
    const last = leaf.search(/\d(?=\D*$)/);
    const bumped = (text: string, at: number) =>
      text.slice(0, at) + String((Number(text[at]) + 1) % 10) + text.slice(at + 1);
    found.push(bumped(leaf, last), bumped(leaf, digit.index));
  }
  const letter = /[a-z]/i.exec(leaf);
  if (letter) {
    const at = leaf.lastIndexOf(letter[0]);
    const swapped = leaf[at] === leaf[at]?.toLowerCase() ? leaf[at]?.toUpperCase() : leaf[at]?.toLowerCase();
    found.push(leaf.slice(0, at) + swapped + leaf.slice(at + 1));
  }
  found.push(`${leaf}x`, leaf.slice(0, -1));
  return found.filter((variant) => variant !== leaf);
};

/** Reverses the key order of every object at every depth. */
const reordered = (value: Json): Json => {
  if (Array.isArray(value)) return value.map(reordered);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([key, item]) => [key, reordered(item)]),
    );
  return value;
};

const ORIGINAL = fullCreditTransfer() as Json;
const LEAF_PATHS = leaves(ORIGINAL);

describe('idempotent initiation: the same key with one part changed is 422', () => {
  it('replays the same request sent with every object in another key order', async () => {
    const key = randomUUID();
    expect((await initiate(ORIGINAL, key)).status).toBe(202);
    const again = await initiate(reordered(ORIGINAL), key, {
      servicerBranchId: SERVICER.servicerBranchId,
      servicerId: SERVICER.servicerId,
    });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it.each(LEAF_PATHS.map((path) => [path.join('.'), path] as const))('body value %s', async (_name, path) => {
    const key = randomUUID();
    const first = await initiate(ORIGINAL, key);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const tried: string[] = [];
    for (const variant of variants(leafAt(ORIGINAL, path))) {
      const reply = await initiate(withLeaf(ORIGINAL, path, variant), key);
      tried.push(`${JSON.stringify(variant)} -> ${reply.status}`);
      // A variant the schema refuses says nothing about the match: try the next one.
      if (reply.status === 400) continue;
      expect(reply.status, tried.join(', ')).toBe(422);
      expect(reply.body.error).toBe('idempotency_key_reused');
      return;
    }
    throw new Error(`no valid other value found for ${path.join('.')}: ${tried.join(', ')}`);
  });

  it.each([
    ['servicerId changed', { ...SERVICER, servicerId: 'BANK-2' }],
    ['servicerId left out', { servicerBranchId: SERVICER.servicerBranchId }],
    ['servicerBranchId changed', { ...SERVICER, servicerBranchId: 'BRANCH-2' }],
    ['servicerBranchId left out', { servicerId: SERVICER.servicerId }],
    ['both left out', {}],
  ])('%s', async (_name, headers: Record<string, string>) => {
    const key = randomUUID();
    const body = minimalCreditTransfer();
    expect((await initiate(body, key)).status).toBe(202);
    const before = await storedCount();
    const reply = await initiate(body, key, headers);
    expect(reply.status, JSON.stringify(reply.body)).toBe(422);
    expect(reply.body.error).toBe('idempotency_key_reused');
    expect(await storedCount()).toBe(before);
  });

  it('a servicer header added to a request first sent without it', async () => {
    const additions: Record<string, string>[] = [{ servicerId: 'BANK-1' }, { servicerBranchId: 'BRANCH-1' }];
    for (const added of additions) {
      const key = randomUUID();
      expect((await initiate(minimalCreditTransfer(), key, {})).status).toBe(202);
      expect((await initiate(minimalCreditTransfer(), key, added)).status).toBe(422);
    }
  });
});

describe('idempotent cancellation: the same key with one part changed is 422', () => {
  const cancel = (paymentId: string, body: unknown, key: string, headers: Record<string, string>) =>
    callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/cancellation`, {
      method: 'POST',
      token: service.token,
      ...(body !== undefined && { body }),
      headers: { idempotencyId: key, ...headers },
    });

  const REASON = { cancellationReason: 'Ordered twice' };

  it.each([
    ['the same request replays', REASON, SERVICER, 202],
    ['cancellationReason changed', { cancellationReason: 'Ordered twicE' }, SERVICER, 422],
    ['cancellationReason left out', {}, SERVICER, 422],
    ['no body at all', undefined, SERVICER, 422],
    ['servicerId changed', REASON, { ...SERVICER, servicerId: 'BANK-2' }, 422],
    ['servicerId left out', REASON, { servicerBranchId: SERVICER.servicerBranchId }, 422],
    ['servicerBranchId changed', REASON, { ...SERVICER, servicerBranchId: 'BRANCH-2' }, 422],
    ['servicerBranchId left out', REASON, { servicerId: SERVICER.servicerId }, 422],
  ])('%s', async (_name, body, headers: Record<string, string>, status) => {
    const created = await initiate(minimalCreditTransfer(), randomUUID());
    expect(created.status).toBe(202);
    const key = randomUUID();
    expect((await cancel(created.body.paymentId, REASON, key, SERVICER)).status).toBe(202);
    const reply = await cancel(created.body.paymentId, body, key, headers);
    expect(reply.status, JSON.stringify(reply.body)).toBe(status);
    if (status === 422) expect(reply.body.error).toBe('idempotency_key_reused');
    else expect(reply.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a reason or servicer header added to a cancellation first sent without it', async () => {
    for (const [body, headers] of [
      [REASON, {}],
      [{}, { servicerId: 'BANK-1' }],
      [{}, { servicerBranchId: 'BRANCH-1' }],
    ] as const) {
      const created = await initiate(minimalCreditTransfer(), randomUUID());
      const key = randomUUID();
      expect((await cancel(created.body.paymentId, {}, key, {})).status).toBe(202);
      expect((await cancel(created.body.paymentId, body, key, headers)).status).toBe(422);
    }
  });
});
