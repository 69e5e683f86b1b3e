import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AwsNetworkError,
  AwsServiceError,
  awsJsonClient,
  credentialsFromEnvironment,
  DYNAMODB,
  isAwsError,
  KMS,
} from '#adapters/aws-json';
import { documentClientOf } from '#adapters/dynamodb-client';

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token-example',
};

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  /** The signature the AWS SDK's own signer computes for the request as received. */
  expectedAuthorization: string;
}

type Reply = { status: number; body?: unknown; delayMs?: number; headers?: Record<string, string> };

let server: Server;
let endpoint: string;
const received: Received[] = [];
let replies: Reply[] = [];

/** Recomputes the request's SigV4 signature with the AWS SDK's signer, over the headers it says it signed. */
const expectedAuthorization = async (
  request: IncomingMessage,
  body: string,
  region: string,
  service: string,
) => {
  const authorization = String(request.headers.authorization);
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';') ?? [];
  const amzDate = String(request.headers['x-amz-date']);
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const headers = Object.fromEntries(signedHeaders.map((name) => [name, String(request.headers[name])]));
  const signer = new SignatureV4({
    credentials: CREDENTIALS,
    region,
    service,
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: String(request.headers.host).split(':')[0] ?? '',
      port: Number(String(request.headers.host).split(':')[1]),
      path: request.url ?? '/',
      headers,
      body,
    },
    { signingDate, signableHeaders: new Set(signedHeaders) },
  );
  return String(signed.headers.authorization);
};

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const target = String(request.headers['x-amz-target']);
    const service = target.startsWith('TrentService') ? 'kms' : 'dynamodb';
    received.push({
      headers: request.headers,
      body,
      expectedAuthorization: await expectedAuthorization(request, body, 'eu-west-1', service),
    });
    const reply = replies.shift() ?? { status: 200, body: {} };
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (response.destroyed) return;
    response.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.0', ...reply.headers });
    response.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  received.length = 0;
  replies = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const client = (service = DYNAMODB, options: { maxAttempts?: number; attemptTimeoutMs?: number } = {}) =>
  awsJsonClient(service, {
    endpoint,
    region: 'eu-west-1',
    credentials: async () => CREDENTIALS,
    backoffMs: 1,
    ...options,
  });

describe('the AWS JSON protocol client', () => {
  it('signs each call with SigV4 as the AWS SDK signs it, session token included', async () => {
    replies = [{ status: 200, body: { Item: { pk: { S: 'a' } } } }];

    const answer = await client()('GetItem', { TableName: 't', Key: { pk: { S: 'a' } } });

    expect(answer).toEqual({ Item: { pk: { S: 'a' } } });
    const [request] = received;
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/dynamodb\/aws4_request, /,
    );
    expect(request?.headers.authorization).toBe(request?.expectedAuthorization);
    expect(request?.headers.authorization).toMatch(
      /SignedHeaders=[^,]*x-amz-security-token[^,]*x-amz-target/,
    );
    expect(request?.headers['x-amz-security-token']).toBe(CREDENTIALS.sessionToken);
  });

  it('names the operation in X-Amz-Target with the protocol version of the service', async () => {
    await client(DYNAMODB)('PutItem', { TableName: 't' });
    await client(KMS)('Sign', { KeyId: 'k' });

    expect(
      received.map((request) => [request.headers['x-amz-target'], request.headers['content-type']]),
    ).toEqual([
      ['DynamoDB_20120810.PutItem', 'application/x-amz-json-1.0'],
      ['TrentService.Sign', 'application/x-amz-json-1.1'],
    ]);
    expect(JSON.parse(received[1]?.body ?? '')).toEqual({ KeyId: 'k' });
    expect(received[1]?.headers.authorization).toContain('/eu-west-1/kms/aws4_request');
    expect(received[1]?.headers.authorization).toBe(received[1]?.expectedAuthorization);
  });

  it('gives an error answer its code, message, status and request id', async () => {
    replies = [
      {
        status: 400,
        body: {
          __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
          message: 'The conditional request failed',
          Item: { pk: { S: 'a' } },
        },
        headers: { 'x-amzn-requestid': 'req-1' },
      },
    ];

    const error = await client()('PutItem', {}).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(AwsServiceError);
    expect(isAwsError(error, 'ConditionalCheckFailedException')).toBe(true);
    expect(error).toMatchObject({
      name: 'ConditionalCheckFailedException',
      message: 'The conditional request failed',
      statusCode: 400,
      requestId: 'req-1',
      details: { Item: { pk: { S: 'a' } } },
    });
    expect(received).toHaveLength(1);
  });

  it('reads the code from the x-amzn-ErrorType header when the body has none', async () => {
    replies = [
      { status: 400, headers: { 'x-amzn-errortype': 'ExecutionAlreadyExists:http://internal.amazon.com/' } },
    ];

    const error = await client()('StartExecution', {}).catch((caught: unknown) => caught);

    expect(isAwsError(error, 'ExecutionAlreadyExists')).toBe(true);
  });

  it('retries throttling and server errors, then answers', async () => {
    replies = [
      {
        status: 400,
        body: { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException' },
      },
      { status: 503, body: {} },
      { status: 200, body: { ok: true } },
    ];

    await expect(client(DYNAMODB, { maxAttempts: 3 })('GetItem', {})).resolves.toEqual({ ok: true });
    expect(received).toHaveLength(3);
  });

  it('gives up after the last attempt with the last error', async () => {
    replies = [
      { status: 500, body: { __type: 'InternalServerError' } },
      { status: 500, body: { __type: 'InternalServerError' } },
    ];

    await expect(client(DYNAMODB, { maxAttempts: 2 })('GetItem', {})).rejects.toMatchObject({
      name: 'InternalServerError',
    });
    expect(received).toHaveLength(2);
  });

  it('does not retry a request the service refused as wrong', async () => {
    replies = [
      { status: 400, body: { __type: 'com.amazon.coral.validate#ValidationException', message: 'bad' } },
    ];

    await expect(client(DYNAMODB, { maxAttempts: 3 })('GetItem', {})).rejects.toMatchObject({
      name: 'ValidationException',
    });
    expect(received).toHaveLength(1);
  });

  it('gives up on an attempt that is not answered in time, and tries again', async () => {
    replies = [
      { status: 200, body: { late: true }, delayMs: 500 },
      { status: 200, body: { onTime: true } },
    ];

    await expect(client(DYNAMODB, { attemptTimeoutMs: 100 })('GetItem', {})).resolves.toEqual({
      onTime: true,
    });
    expect(received).toHaveLength(2);
  });

  it('reports a service it cannot reach as a network error', async () => {
    const unreachable = awsJsonClient(DYNAMODB, {
      endpoint: 'http://127.0.0.1:1',
      region: 'eu-west-1',
      credentials: async () => CREDENTIALS,
      maxAttempts: 2,
      backoffMs: 1,
    });

    await expect(unreachable('GetItem', {})).rejects.toBeInstanceOf(AwsNetworkError);
  });

  it("takes Lambda's credentials from the environment, and says so when they are missing", async () => {
    const saved = { ...process.env };
    try {
      process.env.AWS_ACCESS_KEY_ID = 'AKID';
      process.env.AWS_SECRET_ACCESS_KEY = 'secret';
      process.env.AWS_SESSION_TOKEN = 'token';
      await expect(credentialsFromEnvironment()).resolves.toEqual({
        accessKeyId: 'AKID',
        secretAccessKey: 'secret',
        sessionToken: 'token',
      });
      delete process.env.AWS_SECRET_ACCESS_KEY;
      await expect(credentialsFromEnvironment()).rejects.toThrow(/AWS_SECRET_ACCESS_KEY/);
    } finally {
      process.env = saved;
    }
  });
});

describe('the DynamoDB document client', () => {
  const recording = (answer: Record<string, unknown>) => {
    const calls: { operation: string; input: Readonly<Record<string, unknown>> }[] = [];
    const documents = documentClientOf((async (
      operation: string,
      input: Readonly<Record<string, unknown>>,
    ) => {
      calls.push({ operation, input });
      return answer;
    }) as Parameters<typeof documentClientOf>[0]);
    return { documents, calls };
  };

  it('sends keys, items and expression values as attribute values, dropping undefined ones', async () => {
    const { documents, calls } = recording({ Attributes: { n: { N: '2' } } });

    const answer = await documents.update({
      TableName: 't',
      Key: { pk: 'a', sk: 'b' },
      UpdateExpression: 'SET n = :n, l = :l',
      ExpressionAttributeValues: { ':n': 2, ':l': [{ status: 'Received', reason: undefined }] },
      ReturnValues: 'ALL_NEW',
    });

    expect(calls).toEqual([
      {
        operation: 'UpdateItem',
        input: {
          TableName: 't',
          Key: { pk: { S: 'a' }, sk: { S: 'b' } },
          UpdateExpression: 'SET n = :n, l = :l',
          ExpressionAttributeValues: {
            ':n': { N: '2' },
            ':l': { L: [{ M: { status: { S: 'Received' } } }] },
          },
          ReturnValues: 'ALL_NEW',
        },
      },
    ]);
    expect(answer.Attributes).toEqual({ n: 2 });
  });

  it('gives back items, pages and capacity as plain values', async () => {
    const { documents } = recording({
      Items: [{ pk: { S: 'a' }, amount: { S: '1.50' } }],
      LastEvaluatedKey: { pk: { S: 'a' } },
      Count: 1,
      ConsumedCapacity: { CapacityUnits: 0.5 },
    });

    const page = await documents.query({ TableName: 't', ExclusiveStartKey: { pk: 'z' } });

    expect(page).toEqual({
      Items: [{ pk: 'a', amount: '1.50' }],
      LastEvaluatedKey: { pk: 'a' },
      Count: 1,
      ConsumedCapacity: { CapacityUnits: 0.5 },
    });
  });

  it('marshals batch reads per table, and the keys left unread', async () => {
    const { documents, calls } = recording({
      Responses: { t: [{ pk: { S: 'a' } }] },
      UnprocessedKeys: { t: { Keys: [{ pk: { S: 'b' } }] } },
    });

    const answer = await documents.batchGet({ RequestItems: { t: { Keys: [{ pk: 'a' }, { pk: 'b' }] } } });

    expect(calls[0]?.input).toEqual({
      RequestItems: { t: { Keys: [{ pk: { S: 'a' } }, { pk: { S: 'b' } }] } },
    });
    expect(answer.Responses).toEqual({ t: [{ pk: 'a' }] });
    expect(answer.UnprocessedKeys).toEqual({ t: { Keys: [{ pk: 'b' }] } });
  });
});
