import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '#domain/commons/errors';
import { parseOrThrow } from '#domain/commons/validation';
import { creditTransferRequestSchema } from '#domain/credit-transfers/credit-transfer';
import { createWebhookEndpointRequestSchema } from '#domain/webhooks/webhook-endpoint';
import { fullCreditTransfer } from '../../fixtures/credit-transfers.ts';

const invalidParamsOf = (schema: Parameters<typeof parseOrThrow>[0], body: unknown) => {
  try {
    parseOrThrow(schema, body, 'The request body is not valid');
  } catch (error) {
    if (error instanceof InvalidRequestError) return error.invalidParams;
    throw error;
  }
  return [];
};

/** Every leaf of a body, by its path, so each can be replaced by a wrong value. */
const leaves = (value: unknown, path: (string | number)[] = []): (string | number)[][] =>
  value !== null && typeof value === 'object'
    ? Object.entries(value).flatMap(([key, item]) =>
        leaves(item, [...path, Array.isArray(value) ? Number(key) : key]),
      )
    : [path];

const withLeaf = (body: unknown, path: (string | number)[], replacement: unknown): unknown => {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[path.at(-1) as string | number] = replacement;
  return copy;
};

const WRONG_VALUES: unknown[] = [12, true, null, {}, [], '', 'x'.repeat(5000), '\u0000'];

// The validation library's own words, which must never reach a client.
const LIBRARY_WORDS = /Invalid input|expected|received|Too big|Too small|Invalid (string|option|format)/i;

describe('invalidParams reasons', () => {
  const transfer = fullCreditTransfer();
  const cases = leaves(transfer).flatMap((path) => WRONG_VALUES.map((value) => ({ path, value })));

  it('are the service’s own sentences, one per field, for every field of a transfer given a wrong value', () => {
    expect(cases.length).toBeGreaterThan(300);
    for (const { path, value } of cases) {
      const params = invalidParamsOf(creditTransferRequestSchema, withLeaf(transfer, path, value));
      const names = params.map((param) => param.name);
      expect(new Set(names).size, `${path.join('.')} = ${JSON.stringify(value)}`).toBe(names.length);
      for (const { name, reason } of params) {
        expect(reason, `${name} = ${JSON.stringify(value)}`).not.toMatch(LIBRARY_WORDS);
        expect(reason, `${name} = ${JSON.stringify(value)}`).toMatch(/^(must|is|has|does) /);
      }
    }
  });

  it('name a wrong currency once, in the service’s words', () => {
    expect(invalidParamsOf(creditTransferRequestSchema, { ...transfer, currency: 'EURO' })).toEqual([
      { name: 'currency', reason: 'must be exactly 3 characters' },
    ]);
    expect(invalidParamsOf(creditTransferRequestSchema, { ...transfer, currency: 'eur' })).toEqual([
      { name: 'currency', reason: 'must be three upper-case letters' },
    ]);
  });

  it('say which type a field must have and that a missing field is required', () => {
    const { amount: _, ...withoutAmount } = transfer;
    expect(invalidParamsOf(creditTransferRequestSchema, { ...withoutAmount, purpose: 12 })).toEqual([
      { name: 'amount', reason: 'is required' },
      { name: 'purpose', reason: 'must be a string' },
    ]);
  });

  it('list the values a closed field accepts', () => {
    const params = invalidParamsOf(createWebhookEndpointRequestSchema, {
      url: 'https://hooks.example.com/a',
      eventTypes: ['credit-transfer.nonsense'],
    });
    expect(params).toHaveLength(1);
    expect(params[0]?.reason).toMatch(/^must be one of "/);
  });
});
