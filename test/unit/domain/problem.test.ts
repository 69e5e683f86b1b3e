import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '#domain/commons/errors';
import { parseOrThrow } from '#domain/commons/validation';
import { creditTransferRequestSchema } from '#domain/credit-transfers/credit-transfer';
import { toProblemResponse } from '#shared/middleware';
import { MAX_INVALID_PARAM_TEXT, MAX_INVALID_PARAMS } from '#shared/problem';
import { minimalCreditTransfer } from '../../fixtures/credit-transfers.ts';

const refusal = (body: unknown) => {
  try {
    parseOrThrow(creditTransferRequestSchema, body, 'The credit transfer is not valid');
  } catch (error) {
    if (error instanceof InvalidRequestError) return JSON.parse(toProblemResponse(error).body);
  }
  throw new Error('expected a refusal');
};

describe('400 problem body', () => {
  it('names at most 100 fields however many unknown fields a body has', () => {
    const extra = Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`field${index}`, 'x']));
    const body = refusal(minimalCreditTransfer(extra));
    expect(body.status).toBe(400);
    expect(body.invalidParams).toHaveLength(MAX_INVALID_PARAMS);
  });

  it('shortens a field name longer than the documented bound', () => {
    const body = refusal(minimalCreditTransfer({ ['k'.repeat(5000)]: 'x' }));
    expect(body.invalidParams[0].name.length).toBe(MAX_INVALID_PARAM_TEXT);
  });

  it('carries the spec fields and the RFC 9457 fields with the same text', () => {
    const body = refusal(minimalCreditTransfer({ amount: 'ten' }));
    expect(body).toMatchObject({ error: 'invalid_request', title: 'Bad Request', status: 400 });
    expect(body.detail).toBe(body.error_description);
    expect(body.invalidParams).toEqual([{ name: 'amount', reason: expect.any(String) }]);
  });
});
