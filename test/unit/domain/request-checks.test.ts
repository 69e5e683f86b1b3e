import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createIssueTokenHandler } from '#auth/issue-token';
import { httpHandler, jsonHttpHandler } from '#shared/http-handler';
import { logger } from '#shared/logger';
import {
  boundedRawBody,
  firstUnfaithfulString,
  type JsonEvent,
  jsonNestingDepth,
  MAX_JSON_DEPTH,
  parseJsonObjectText,
} from '#shared/middleware';
import { proxyEvent } from '../auth/fakes.ts';

/**
 * The checks every handler runs, fed v1 proxy events shaped as API Gateway builds them on AWS:
 * `headers` holds one value per name, `multiValueHeaders` every line; query and path values
 * arrive decoded, with bytes that were not UTF-8 already turned into U+FFFD.
 */
const awsEvent = (overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent =>
  ({
    resource: '/v1/payments/credit-transfers',
    path: '/v1/payments/credit-transfers',
    httpMethod: 'GET',
    headers: { Authorization: 'Bearer b' },
    multiValueHeaders: { Authorization: ['Bearer b'] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      authorizer: { tenant: 't', clientId: 'c', scope: 'transactions:read transactions:write' },
    },
    ...overrides,
  }) as APIGatewayProxyEvent;

const context = { functionName: 'test', awsRequestId: 'r' } as Context;
const reached = { statusCode: 200, body: 'reached' };
const handler = httpHandler(async () => reached);
const jsonHandler = jsonHttpHandler(async () => reached);

const problemOf = (result: { statusCode: number; body: string }) => ({
  status: result.statusCode,
  ...(JSON.parse(result.body) as { error: string; invalidParams?: { name: string }[] }),
});

describe('the checks every handler runs on a v1 proxy event', () => {
  it('refuses a header sent twice, as multiValueHeaders shows it, though headers holds one value', async () => {
    for (const [name, values] of [
      ['Authorization', ['Bearer a', 'Bearer a']],
      ['content-type', ['application/json', 'application/json']],
      ['servicerId', ['A', 'B']],
      ['Idempotency-Key', ['k', 'k']],
    ] as const) {
      const result = await handler(
        awsEvent({ headers: { [name]: values[1] }, multiValueHeaders: { [name]: [...values] } }),
        context,
      );
      expect(problemOf(result), name).toMatchObject({ status: 400, error: 'invalid_request' });
      expect(problemOf(result).invalidParams?.[0]?.name.toLowerCase()).toBe(name.toLowerCase());
    }
    // The same name in two letter cases is the same header.
    const cased = await handler(
      awsEvent({ multiValueHeaders: { servicerId: ['A'], SERVICERID: ['A'] } }),
      context,
    );
    expect(cased.statusCode).toBe(400);
    expect((await handler(awsEvent(), context)).body).toBe('reached');
  });

  it('refuses query and path values API Gateway decoded from bytes that are not UTF-8', async () => {
    const query = await handler(
      awsEvent({
        queryStringParameters: { 'amount.gte': '\uFFFD' },
        multiValueQueryStringParameters: { 'amount.gte': ['1', '\uFFFD'] },
      }),
      context,
    );
    expect(problemOf(query)).toMatchObject({ status: 400, invalidParams: [{ name: 'amount.gte' }] });
    const surrogate = await handler(
      awsEvent({ queryStringParameters: { 'checkType.eq': 'a\ud800' } }),
      context,
    );
    expect(problemOf(surrogate)).toMatchObject({ status: 400, invalidParams: [{ name: 'checkType.eq' }] });
    const path = await handler(awsEvent({ pathParameters: { paymentId: '\udfff' } }), context);
    expect(problemOf(path)).toMatchObject({ status: 400, invalidParams: [{ name: 'paymentId' }] });
    const fine = await handler(
      awsEvent({ multiValueQueryStringParameters: { 'checkType.eq': ['é😀'] } }),
      context,
    );
    expect(fine.body).toBe('reached');
  });

  it('refuses a content-encoded body with 415, however API Gateway handed it over', async () => {
    for (const [encoding, isBase64Encoded] of [
      ['gzip', true],
      ['br', false],
      ['identity, gzip', false],
    ] as const) {
      const result = await jsonHandler(
        awsEvent({
          httpMethod: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding },
          multiValueHeaders: { 'Content-Type': ['application/json'], 'Content-Encoding': [encoding] },
          body: isBase64Encoded ? Buffer.from('{}').toString('base64') : '{}',
          isBase64Encoded,
        }) as JsonEvent,
        context,
      );
      expect(problemOf(result), encoding).toMatchObject({ status: 415, error: 'unsupported_media_type' });
    }
    expect(
      boundedRawBody({ body: '{}', isBase64Encoded: false, headers: { 'content-encoding': 'identity' } }),
    ).toBe('{}');
  });
});

describe('JSON text that cannot be stored as sent', () => {
  it.each([
    ['{"a":"\\ud800"}', 'a'],
    ['{"a":{"b":["x","\\udc00y"]}}', 'a.b[1]'],
    ['{"\\ud83d":1}', '\ud83d'],
    ['"\\ud800"', '(body)'],
    ['{"a":"\\ufffd"}', 'a'],
  ])('refuses %s naming %s', (text, name) => {
    expect(() => parseJsonObjectText(text)).toThrow(
      expect.objectContaining({ invalidParams: [expect.objectContaining({ name })] }),
    );
  });

  it('accepts escaped surrogate pairs and text beyond the BMP', () => {
    expect(parseJsonObjectText('{"a":"\\ud83d\\ude00 𝔘"}')).toEqual({ a: '😀 𝔘' });
    expect(firstUnfaithfulString({ a: ['é', { b: '中' }] })).toBeUndefined();
  });
});

describe('JSON nested deeper than MAX_JSON_DEPTH', () => {
  const nested = (depth: number, kind: 'array' | 'object') =>
    kind === 'array'
      ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
      : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const inTransfer = (depth: number) =>
    `{"paymentMethod":"CreditTransfer","amount":"1","debtorAccountId":"d","identifiers":${nested(depth, 'array')}}`;

  it('measures nesting in one pass, brackets inside strings not counted', () => {
    expect(jsonNestingDepth('1')).toBe(0);
    expect(jsonNestingDepth('{"a":[{"b":[]}]}')).toBe(4);
    expect(jsonNestingDepth(`{"a":"${'['.repeat(1000)}\\"{{"}`)).toBe(1);
    expect(jsonNestingDepth(nested(200_000, 'array'))).toBe(200_000);
  });

  it.each([
    ['arrays', 'array'],
    ['objects', 'object'],
  ] as const)(
    'refuses %s 20,000 levels deep with a 400 naming the body, not a stack overflow',
    (_name, kind) => {
      for (const depth of [MAX_JSON_DEPTH + 1, 20_000, 60_000]) {
        expect(() => parseJsonObjectText(nested(depth, kind))).toThrow(
          expect.objectContaining({
            message: 'The request body is nested too deeply',
            invalidParams: [
              {
                name: '(body)',
                reason: `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`,
              },
            ],
          }),
        );
      }
      expect(parseJsonObjectText(nested(MAX_JSON_DEPTH, kind))).toBeDefined();
    },
  );

  it('answers 400 with the error body through a handler, and logs no error', async () => {
    const errors = vi.spyOn(logger, 'error');
    // Each within the 64 KiB a body may have, so the nesting is what is refused.
    for (const body of [nested(20_000, 'array'), nested(10_000, 'object'), inTransfer(5_000)]) {
      const result = await jsonHandler(
        awsEvent({ httpMethod: 'POST', body, headers: { 'Content-Type': 'application/json' } }) as JsonEvent,
        context,
      );
      expect(problemOf(result)).toMatchObject({
        status: 400,
        error: 'invalid_request',
        invalidParams: [{ name: '(body)' }],
      });
    }
    expect(errors).not.toHaveBeenCalled();
    errors.mockRestore();
  });

  it('answers 400 invalid_request at the token endpoint, before any authentication', async () => {
    const issueToken = createIssueTokenHandler(() => {
      throw new Error('the token endpoint must refuse the body before it needs its dependencies');
    });
    for (const body of [
      nested(20_000, 'array'),
      `{"grant_type":"client_credentials","x":${nested(10_000, 'object')}}`,
    ]) {
      const result = await issueToken(
        proxyEvent({ body, headers: { 'Content-Type': 'application/json' } }),
        context,
      );
      expect(result.statusCode).toBe(400);
      expect(JSON.parse(result.body)).toMatchObject({ error: 'invalid_request' });
    }
  });

  it('walks a parsed value of any depth without recursion', () => {
    let deep: unknown = 'ok';
    for (let level = 0; level < 100_000; level++) deep = level % 2 === 0 ? [deep] : { a: deep };
    expect(firstUnfaithfulString(deep)).toBeUndefined();
    let bad: unknown = '\ud800';
    for (let level = 0; level < 100_000; level++) bad = [bad];
    expect(firstUnfaithfulString(bad)).toMatch(/^\[0\]\[0\]/);
  });
});
