import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AwsJsonStub, startAwsJsonStub } from './aws-json-stub.ts';

/**
 * X-Ray as a Lambda function with active tracing sees it: the SDK calls of the service's clients
 * become subsegments named by service and operation (DynamoDB, PutItem), sent to the daemon
 * address Lambda gives (here a UDP socket of the test). The tracer is loaded only where tracing
 * is possible (lambdas/shared/tracer.ts), so the modules are loaded fresh under Lambda's variables.
 */
let stub: AwsJsonStub;
let daemon: Socket;
let datagrams: string[] = [];

beforeAll(async () => {
  stub = await startAwsJsonStub();
  daemon = createSocket('udp4');
  daemon.on('message', (message) => datagrams.push(message.toString('utf8')));
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await stub.close();
  daemon.close();
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
  datagrams = [];
});

const asLambdaWithTracing = (enabled: boolean) => {
  vi.resetModules();
  vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs24.x');
  vi.stubEnv('LAMBDA_TASK_ROOT', '/var/task');
  vi.stubEnv(
    '_X_AMZN_TRACE_ID',
    'Root=1-6745f1a0-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1',
  );
  vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', `127.0.0.1:${(daemon.address() as AddressInfo).port}`);
  vi.stubEnv('AWS_XRAY_CONTEXT_MISSING', 'IGNORE_ERROR');
  vi.stubEnv('POWERTOOLS_TRACE_ENABLED', String(enabled));
};

const putThroughTheServiceClient = async () => {
  const { FUNCTION_CALLS } = await import('#adapters/aws/aws-clients');
  const { dynamoDbDocumentClient } = await import('#adapters/aws/dynamodb-client');
  const client = dynamoDbDocumentClient(FUNCTION_CALLS, {
    endpoint: stub.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
  await client.put({ TableName: 'credit-transfers', Item: { pk: 'a', sk: 'b' } });
};

/** The documents sent to the daemon: each datagram is a header line, then the segment. */
const sentSegments = () =>
  datagrams.map(
    (datagram) => JSON.parse(datagram.slice(datagram.indexOf('\n') + 1)) as Record<string, unknown>,
  );

describe('tracing of AWS calls', () => {
  // First: the tracer of the other test subscribes to Node's HTTP channels for the whole process.
  it('neither loads the tracer nor sends anything when tracing is switched off', async () => {
    asLambdaWithTracing(false);
    const { tracer } = await import('#shared/tracer');
    expect(tracer).toBeUndefined();
    await putThroughTheServiceClient();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(datagrams).toEqual([]);
  });

  it('sends a DynamoDB PutItem subsegment on Lambda with active tracing', async () => {
    asLambdaWithTracing(true);
    await putThroughTheServiceClient();
    await vi.waitFor(() => expect(sentSegments().length).toBeGreaterThan(0));
    expect(sentSegments()).toContainEqual(
      expect.objectContaining({
        name: 'DynamoDB',
        namespace: 'aws',
        trace_id: '1-6745f1a0-0123456789abcdef01234567',
        aws: expect.objectContaining({ operation: 'PutItem', table_name: 'credit-transfers' }),
      }),
    );
  });
});
