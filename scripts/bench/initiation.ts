import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { marshall } from '@aws-sdk/util-dynamodb';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import {
  DynamoDbCreditTransferStore,
  toCreditTransferItem,
} from '#adapters/credit-transfers/credit-transfer-store';
import { creditTransferKey } from '#adapters/table/keys';
import { systemClock } from '#domain/commons/ports';
import { initiateCreditTransfer } from '#domain/credit-transfers/initiate-credit-transfer';
import type { LocalService } from '#local/service-process';
import { fullCreditTransfer, minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { type BenchClient, combine, type RunFigures, runConcurrently } from './support.ts';

const require = createRequire(import.meta.url);
/** dynalite's own item size: the size DynamoDB bills by. */
const { itemSize } = require('dynalite/db') as { itemSize: (item: unknown) => number };

const TABLE = 'credit-transfers';

/**
 * Initiations per second through the whole local HTTP stack (authorizer, handler, conditional
 * write) against raw conditional PutItems of the same item on the same dynalite, same concurrency.
 */
export const benchInitiationThroughput = async (
  service: LocalService,
  api: BenchClient,
  options: { requests: number; concurrency: number; rounds: number },
) => {
  const body = minimalCreditTransfer();
  const round = { requests: Math.ceil(options.requests / options.rounds), concurrency: options.concurrency };
  const httpRound = () =>
    runConcurrently(round, async (index) => {
      const reply = await api.post('/v1/payments/credit-transfers', body, {
        idempotencyId: `bench-${index}-${randomUUID().slice(0, 8)}`,
      });
      if (reply.status !== 202) throw new Error(`initiation answered ${reply.status}: ${reply.text}`);
    });

  const client = createDocumentClient(undefined, service.tableSocket);
  const template = toCreditTransferItem({
    tenant: 'bench',
    paymentId: 'template',
    clientId: 'bench',
    createdAt: new Date().toISOString(),
    status: 'Received',
    statusDate: new Date().toISOString(),
    requestHash: 'f'.repeat(64),
    idempotencyKey: 'bench-key',
    servicer: {},
    transfer: body,
    history: [{ status: 'Received', date: new Date().toISOString(), actor: 'bench' }],
  });
  const rawRound = () =>
    runConcurrently(round, async () => {
      const paymentId = randomUUID();
      await client.put({
        TableName: TABLE,
        Item: { ...template, pk: creditTransferKey('bench', paymentId).pk, paymentId },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
    });
  // Alternating rounds, so a table that grows or a busy moment weighs on both sides alike.
  const viaHttp: RunFigures[] = [];
  const raw: RunFigures[] = [];
  for (let index = 0; index < options.rounds; index++) {
    viaHttp.push(await httpRound());
    raw.push(await rawRound());
  }
  const http = combine(viaHttp);
  const direct = combine(raw);
  return { viaHttp: http, raw: direct, ratio: http.perSecond / direct.perSecond };
};

/** Write capacity per initiation, measured by DynamoDB's own ReturnConsumedCapacity. */
export const benchInitiationCapacity = async (service: LocalService) => {
  const client = createDocumentClient(undefined, service.tableSocket);
  const units: { operation: string; units: number }[] = [];
  const store = new DynamoDbCreditTransferStore(client, TABLE, (operation, capacityUnits) =>
    units.push({ operation, units: capacityUnits }),
  );
  const measure = async (label: string, body: unknown, idempotencyKey?: string) => {
    units.length = 0;
    const { creditTransfer } = await initiateCreditTransfer(
      { store, clock: systemClock },
      { tenant: 'bench', clientId: 'bench', body, servicer: {}, ...(idempotencyKey && { idempotencyKey }) },
    );
    const writes = units
      .filter((entry) => entry.operation === 'create')
      .reduce((sum, entry) => sum + entry.units, 0);
    const reads = units
      .filter((entry) => entry.operation === 'get')
      .reduce((sum, entry) => sum + entry.units, 0);
    const record = await store.get('bench', creditTransfer.paymentId);
    const bytes = record
      ? itemSize(marshall(toCreditTransferItem(record), { removeUndefinedValues: true }))
      : 0;
    return {
      label,
      itemBytes: bytes,
      startedKilobytes: Math.ceil(bytes / 1024),
      writeUnits: writes,
      readUnits: reads,
    };
  };
  const key = `capacity-${randomUUID()}`;
  return [
    await measure('minimal transfer, no idempotency key', minimalCreditTransfer()),
    await measure(
      'minimal transfer, idempotency key',
      minimalCreditTransfer(),
      `capacity-min-${randomUUID()}`,
    ),
    await measure('every field, no idempotency key', fullCreditTransfer()),
    await measure('every field, idempotency key', fullCreditTransfer(), key),
    await measure('every field, replay of that key', fullCreditTransfer(), key),
  ];
};
