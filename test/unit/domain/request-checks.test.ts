import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { httpHandler, jsonHttpHandler } from '#shared/http-handler';
import {
  boundedRawBody,
  firstUnfaithfulString,
  type JsonEvent,
  parseJsonObjectText,
} from '#shared/middleware';

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
    requestContext: { authorizer: { tenant: 't', clientId: 'c' } },
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
