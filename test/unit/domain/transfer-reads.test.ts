import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import type { GetCommandInput } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbCreditTransferList } from '#adapters/credit-transfers/credit-transfer-list';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import { creditTransferKey } from '#adapters/table/keys';
import { createTableInput } from '#adapters/table/table-definition';
import { systemClock } from '#domain/commons/ports';
import { getCreditTransferStatus } from '#domain/credit-transfers/get-credit-transfer-status';
import { initiateCreditTransfer } from '#domain/credit-transfers/initiate-credit-transfer';
import { listCreditTransfers } from '#domain/credit-transfers/list-credit-transfers';
import { createDynamoDbClient } from '#local/table';

/**
 * How the transfer reads meet the table (dynalite in memory). The local table is always
 * consistent, so where only DynamoDB on AWS can show a stale read, the read's parameters are
 * asserted; where the table can hold the stale state (an index entry behind its item), it is set up.
 */
const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => Server;
const TABLE = 'transfer-reads-unit';

let server: Server;
let client: DocumentClient;
/** Every GetItem the stores below make, as sent. */
const gets: GetCommandInput[] = [];
let recording: DocumentClient;

beforeAll(async () => {
  server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await createDynamoDbClient(endpoint).send(new CreateTableCommand(createTableInput(TABLE)));
  client = createDocumentClient(endpoint);
  recording = new Proxy(client, {
    get: (target, property, receiver) =>
      property === 'get'
        ? (input: GetCommandInput) => {
            gets.push(input);
            return target.get(input);
          }
        : Reflect.get(target, property, receiver),
  });
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

const BODY = { paymentMethod: 'CreditTransfer', amount: '10.00', debtorAccountId: 'acc-001' };

describe('the transfer read', () => {
  it('is strongly consistent for the status poll after the 202 and for an idempotent replay', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const store = new DynamoDbCreditTransferStore(recording, TABLE);
    const initiate = () =>
      initiateCreditTransfer(
        { store, clock: systemClock, workflow: undefined },
        { tenant, clientId: 'client-a', idempotencyKey: 'key-1', body: BODY, servicer: {} },
      );
    const { creditTransfer } = await initiate();
    gets.length = 0;
    // The replay reads the payment its key names (on AWS an eventual read can miss it: a 500).
    const replay = await initiate();
    expect(replay.creditTransfer.paymentId).toBe(creditTransfer.paymentId);
    // The poll right after the 202 (on AWS an eventual read can answer 404).
    await getCreditTransferStatus({ store }, { tenant, paymentId: creditTransfer.paymentId });
    expect(gets.length).toBeGreaterThanOrEqual(2);
    for (const input of gets) expect(input).toMatchObject({ ConsistentRead: true });
  });
});

describe('the list with a status filter', () => {
  it('leaves out a transfer whose status index entry is behind its status', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const store = new DynamoDbCreditTransferStore(client, TABLE);
    const { creditTransfer } = await initiateCreditTransfer(
      { store, clock: systemClock, workflow: undefined },
      { tenant, clientId: 'client-a', body: BODY, servicer: {} },
    );
    // The status moved on; the index entry (an eventually consistent GSI on AWS) still says Received.
    await client.update({
      TableName: TABLE,
      Key: creditTransferKey(tenant, creditTransfer.paymentId),
      UpdateExpression: 'SET #status = :status',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': 'AcceptedSettlementCompleted' },
    });
    const key = randomBytes(32);
    const list = (status: string) =>
      listCreditTransfers(
        { store, list: new DynamoDbCreditTransferList(client, TABLE), cursorKey: async () => key },
        { tenant, parameters: { 'status.eq': [status] } },
      );
    expect((await list('Received')).creditTransfers).toEqual([]);
  });
});
