import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_CALLS } from '#adapters/aws/aws-clients';
import { type DocumentClient, dynamoDbDocumentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import { withInvocationDeadline } from '#shared/deadline';
import { toProblemResponse } from '#shared/middleware';
import { ServiceUnavailableError } from '#shared/service-unavailable';
import {
  type AwsJsonStub,
  awsError,
  garbled,
  ok,
  silence,
  startAwsJsonStub,
  trickle,
} from './aws-json-stub.ts';

/**
 * The functions' DynamoDB client (FUNCTION_CALLS: timeouts, standard retries, the invocation's
 * deadline) against a local stand-in for DynamoDB that injects faults.
 */
let stub: AwsJsonStub;
let client: DocumentClient;

beforeAll(async () => {
  stub = await startAwsJsonStub();
  client = dynamoDbDocumentClient(FUNCTION_CALLS, {
    endpoint: stub.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
});
afterAll(async () => {
  await stub.close();
});
afterEach(() => {
  stub.reset();
});

/** A Lambda invocation with this much time left. */
const invocation = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs });

const getItem = () => client.get({ TableName: 'credit-transfers', Key: { pk: 'a', sk: 'b' } });

const caught = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('the call succeeded');
};

const SECONDS = 1000;

describe('the functions’ AWS calls', () => {
  it(
    'retry throttling with backoff, up to the attempts the settings allow, inside the deadline',
    async () => {
      const throttled = awsError('ThrottlingException', 'Rate of requests exceeds the allowed throughput');
      stub.script(throttled, throttled, throttled, ok({ Item: { pk: { S: 'a' }, sk: { S: 'b' } } }));

      const result = await withInvocationDeadline(invocation(20 * SECONDS), getItem);

      expect(result.Item).toEqual({ pk: 'a', sk: 'b' });
      expect(stub.requests.map((request) => request.headers['amz-sdk-request'])).toEqual([
        'attempt=1; max=4',
        'attempt=2; max=4',
        'attempt=3; max=4',
        'attempt=4; max=4',
      ]);
      expect(result.$metadata.attempts).toBe(4);
      // The SDK's standard mode waits between throttled attempts (a random share of a growing ceiling).
      expect(result.$metadata.totalRetryDelay).toBeGreaterThan(0);
    },
    30 * SECONDS,
  );

  it(
    'give up throttling at the deadline with a retryable error, not past it',
    async () => {
      stub.script(...Array.from({ length: 10 }, () => awsError('ThrottlingException', 'Rate exceeded')));
      const started = Date.now();

      const error = await caught(withInvocationDeadline(invocation(1200), getItem));

      // 1.2 s left less the 1 s margin: the backoff of 4 throttled attempts does not fit in it.
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect((error as Error).message).toMatch(/^DynamoDB\.GetItem did not finish within the time left/);
      expect(Date.now() - started).toBeLessThan(1200);
    },
    30 * SECONDS,
  );

  it(
    'cut an answer that trickles in at the deadline',
    async () => {
      // 200 bytes at one every 100 ms: 20 s, were it not cut.
      stub.script(trickle(JSON.stringify({ Item: { pk: { S: 'x'.repeat(160) } } }), 100));
      const started = Date.now();

      const error = await caught(withInvocationDeadline(invocation(3 * SECONDS), getItem));

      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect((error as Error).message).toMatch(/did not finish within the time left/);
      expect(Date.now() - started).toBeLessThan(3 * SECONDS);
      expect(stub.requests).toHaveLength(1);
    },
    30 * SECONDS,
  );

  it(
    'give up an attempt whose answer does not come within the request timeout, and retry it',
    async () => {
      stub.script(silence(), ok({ Item: { pk: { S: 'a' }, sk: { S: 'b' } } }));

      const result = await withInvocationDeadline(invocation(20 * SECONDS), getItem);

      expect(result.Item).toEqual({ pk: 'a', sk: 'b' });
      expect(stub.requests).toHaveLength(2);
      const [first, second] = stub.requests;
      // `at` is when the stub had read a request, a moment after the SDK sent it and started its timer.
      const arrivalSkewMs = 50;
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(
        FUNCTION_CALLS.requestTimeoutMs - arrivalSkewMs,
      );
    },
    30 * SECONDS,
  );

  it('correct a skewed clock from the Date of the refusal and sign the retry with it', async () => {
    const serverTime = new Date(Date.now() + 60 * 60 * SECONDS);
    // Whole seconds, as the Date header carries them.
    serverTime.setMilliseconds(0);
    stub.script(
      awsError('InvalidSignatureException', 'Signature expired: the request time is too skewed', 400, {
        date: serverTime.toUTCString(),
      }),
      ok({}),
    );

    await getItem();

    expect(stub.requests).toHaveLength(2);
    const [first, retry] = stub.requests.map((request) =>
      Date.parse(
        String(request.headers['x-amz-date']).replace(
          /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
          '$1-$2-$3T$4:$5:$6Z',
        ),
      ),
    );
    expect(Math.abs((first ?? 0) - Date.now())).toBeLessThan(60 * SECONDS);
    expect(Math.abs((retry ?? 0) - serverTime.getTime())).toBeLessThan(60 * SECONDS);
  });

  it('do not retry a validation error, and keep its name', async () => {
    stub.script(awsError('ValidationException', 'One or more parameter values were invalid'));

    const error = await caught(getItem());

    expect(stub.requests).toHaveLength(1);
    expect(error).not.toBeInstanceOf(ServiceUnavailableError);
    expect((error as Error).name).toBe('ValidationException');
  });

  it('report a garbled 2xx body as a retryable error naming the request id', async () => {
    stub.script(garbled('REQUEST-ID-OF-THE-GARBLED-ANSWER'));

    const error = await caught(getItem());

    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ retryable: true, requestId: 'REQUEST-ID-OF-THE-GARBLED-ANSWER' });
    expect((error as Error).message).toMatch(/DynamoDB\.GetItem answered a body that could not be read/);
    expect((error as Error).message).toContain('REQUEST-ID-OF-THE-GARBLED-ANSWER');
  });

  it('answer 503 with Retry-After and the error body for a call that could not finish', async () => {
    stub.script(trickle('{"Item":{}}', 2 * SECONDS));

    const error = await caught(withInvocationDeadline(invocation(1500), getItem));
    const response = toProblemResponse(error);

    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({
      'Retry-After': '1',
      'Content-Type': 'application/problem+json',
    });
    expect(JSON.parse(response.body)).toMatchObject({ status: 503, error: 'service_unavailable' });
  });
});

describe('a conditional write the table refuses', () => {
  const record: CreditTransferRecord = {
    tenant: 'acme',
    paymentId: '5f0c9a2e-8d4b-4c1e-9f6a-2b7d3e8c1a40',
    clientId: 'acme-payments',
    createdAt: '2030-01-02T03:04:05.000Z',
    status: 'Received',
    statusDate: '2030-01-02T03:04:05.000Z',
    requestHash: 'hash',
    writeId: 'write-1',
    servicer: { bic: 'BANKDEFFXXX' },
    transfer: {} as CreditTransferRecord['transfer'],
    history: [{ status: 'Received', date: '2030-01-02T03:04:05.000Z', actor: 'acme-payments' }],
  } as CreditTransferRecord;

  it('is the store’s answer “taken”, asked once, not an error', async () => {
    stub.script(awsError('ConditionalCheckFailedException', 'The conditional request failed'));

    const created = await new DynamoDbCreditTransferStore(client, 'credit-transfers').create(record);

    expect(created).toBe(false);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]?.target).toBe('DynamoDB_20120810.PutItem');
    expect(stub.requests[0]?.body).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)' });
  });
});
