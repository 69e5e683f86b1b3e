import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientKey, creditTransferKey } from '#adapters/table/keys';
import { createDynamoDbClient } from '#local/table';
import { createActiveTable } from '../../../scripts/recovery/drill-tables.ts';
import { copyTable } from '../../../scripts/recovery/table-copy.ts';

/**
 * The point-in-time repair's copy over two real local tables (dynalite, as the local runtime
 * uses): the "restored" table as it was at the recovery point, and the stage's table, where
 * things went on after it.
 */
const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => Server;

let server: Server;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let restored: string;
let live: string;
let run = 0;

beforeAll(async () => {
  server = dynalite({ createTableMs: 0, deleteTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = createDynamoDbClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  documents = DynamoDBDocumentClient.from(client);
});
afterAll(async () => {
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(async () => {
  run += 1;
  restored = `restored-${run}`;
  live = `live-${run}`;
  for (const table of [restored, live]) await createActiveTable(client, table);
});

const entry = (status: string, date: string) => ({ status, date });
const transfer = (paymentId: string, history: { status: string; date: string }[]) => ({
  ...creditTransferKey('acme', paymentId),
  paymentId,
  status: history.at(-1)?.status,
  statusDate: history.at(-1)?.date,
  instructedAmount: { amount: '12.50', currency: 'EUR' },
  history,
});
const put = (table: string, item: Record<string, unknown>) =>
  documents.send(new PutCommand({ TableName: table, Item: item }));
const read = async (table: string, key: { pk: string; sk: string }) =>
  (await documents.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

const RECEIVED = entry('Received', '2026-12-01T09:00:00Z');
const ACCEPTED = entry('AcceptedSettlementInProcess', '2026-12-01T09:00:02Z');
const CANCELLED = entry('Cancelled', '2026-12-01T10:30:00Z');

describe('copying a restored table into the stage’s table', () => {
  it('keeps a transfer cancelled after the recovery point cancelled', async () => {
    await put(restored, transfer('p1', [RECEIVED, ACCEPTED]));
    await put(live, transfer('p1', [RECEIVED, ACCEPTED, CANCELLED]));

    const report = await copyTable(client, { from: restored, to: live });

    const after = await read(live, creditTransferKey('acme', 'p1'));
    expect(after?.status).toBe('Cancelled');
    expect(after?.history).toEqual([RECEIVED, ACCEPTED, CANCELLED]);
    expect(report).toEqual({ copied: 0, kept: [creditTransferKey('acme', 'p1')] });
  });

  it('keeps a cancellation requested after the recovery point, before the status moved', async () => {
    await put(restored, transfer('p2', [RECEIVED, ACCEPTED]));
    const requested = {
      ...transfer('p2', [RECEIVED, ACCEPTED]),
      cancellation: { requestedAt: '2026-12-01T10:29:00Z' },
    };
    await put(live, requested);

    const report = await copyTable(client, { from: restored, to: live });

    expect(await read(live, creditTransferKey('acme', 'p2'))).toEqual(requested);
    expect(report.kept).toEqual([creditTransferKey('acme', 'p2')]);
  });

  it('restores transfers the damage removed or set back, and leaves alone what only the stage has', async () => {
    await put(restored, transfer('deleted', [RECEIVED, ACCEPTED]));
    await put(restored, transfer('set-back', [RECEIVED, ACCEPTED]));
    await put(live, {
      ...transfer('set-back', [RECEIVED]),
      instructedAmount: { amount: '0', currency: 'EUR' },
    });
    await put(live, transfer('accepted-since', [RECEIVED]));

    const report = await copyTable(client, { from: restored, to: live });

    expect(report.copied).toBe(2);
    expect(report.kept).toEqual([]);
    expect(await read(live, creditTransferKey('acme', 'deleted'))).toEqual(
      transfer('deleted', [RECEIVED, ACCEPTED]),
    );
    expect(await read(live, creditTransferKey('acme', 'set-back'))).toEqual(
      transfer('set-back', [RECEIVED, ACCEPTED]),
    );
    expect((await read(live, creditTransferKey('acme', 'accepted-since')))?.history).toEqual([RECEIVED]);
  });

  it('never brings back an older state of an item without a history: a client disabled since stays disabled', async () => {
    const client1 = { ...clientKey('acme-erp'), tenant: 'acme', disabled: false };
    await put(restored, client1);
    await put(live, { ...client1, disabled: true });
    const missing = { ...clientKey('globex-erp'), tenant: 'globex', disabled: false };
    await put(restored, missing);

    const report = await copyTable(client, { from: restored, to: live });

    expect((await read(live, clientKey('acme-erp')))?.disabled).toBe(true);
    expect(await read(live, clientKey('globex-erp'))).toEqual(missing);
    expect(report).toEqual({ copied: 1, kept: [clientKey('acme-erp')] });
  });

  it('refuses to copy a table onto itself', async () => {
    await expect(copyTable(client, { from: live, to: live })).rejects.toThrow(/same table/);
  });
});
