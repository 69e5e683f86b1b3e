import { cp, mkdtemp, readFile, rm, truncate } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
});

import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { documentClient } from '#adapters/aws/dynamodb-client';
import { createTableInput } from '#adapters/table/table-definition';
import { FINAL_STATUSES } from '#domain/credit-transfers/credit-transfer';
import { createDynamoDbClient } from '#local/table';
import { workflowDependencies } from '#workflow/dependencies';
import { reconcile } from '#workflow/reconcile';
import { operationsEventPublisher } from '#workflow/status-events';
import { ensureTable, TableStuckCreatingError } from '../../../scripts/local/table.ts';
import { initiate, lifecycleStore, publishingAnnouncer, startRunner, TABLE } from './harness.ts';
import { newestLog, recordBoundaries } from './leveldb-log.ts';

/**
 * A power loss keeps a prefix of the table's write-ahead log. dynalite writes an item's index
 * entries and then the item, each its own LevelDB write, so a prefix can hold an index entry
 * without the item write that goes with it. Whatever prefix survives, the start-up reconciler run
 * must leave no transfer in the table short of a final status.
 */

const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => Server;

let folders: string[] = [];
let pristine = '';

/**
 * The one address the service's clients know (DYNAMODB_ENDPOINT, read once per process): a TCP
 * relay to whichever dynalite is open now. Each dynalite listens on a port of its own, so no
 * restart waits to take back a port something else on the machine may have taken meanwhile.
 */
let current = 0;
const relay = createServer((client) => {
  const upstream = connect(current, '127.0.0.1');
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.pipe(upstream).pipe(client);
  for (const socket of [client, upstream]) socket.on('error', end).on('close', end);
});
let port = 0;

const open = async (path: string): Promise<Server> => {
  const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  current = (server.address() as AddressInfo).port;
  return server;
};
const close = (server: Server) => new Promise((resolve) => server.close(resolve));

const transfersInTable = async () =>
  (
    await documentClient().scan({
      TableName: TABLE,
      ConsistentRead: true,
      FilterExpression: 'sk = :sk',
      ExpressionAttributeValues: { ':sk': 'CREDIT_TRANSFER' },
    })
  ).Items ?? [];

beforeAll(async () => {
  pristine = await mkdtemp(join(tmpdir(), 'torn-table-log-'));
  folders.push(pristine);
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  port = (relay.address() as AddressInfo).port;
  const server = await open(pristine);
  Object.assign(process.env, {
    AWS_REGION: 'local',
    TABLE_NAME: TABLE,
    DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}`,
    EVENTS_FILE: join(pristine, 'events.jsonl'),
    SANDBOX_SETTLEMENT_SECONDS: '0',
    SANDBOX_HOLD_SECONDS: '300',
    CLEARING_POLL_INITIAL_SECONDS: '0',
    CLEARING_POLL_MAX_ATTEMPTS: '4',
    SUBMISSION_LEASE_SECONDS: '1',
  });
  await createDynamoDbClient(`http://127.0.0.1:${port}`).send(
    new CreateTableCommand(createTableInput(TABLE)),
  );
  // Each outcome once: settled, and rejected at the customer-profile check.
  const { runner } = await startRunner();
  for (const debtorAccountId of ['acc-001', 'acc-blocked', 'acc-002'])
    await initiate(runner, { debtorAccountId });
  await runner.idle();
  await close(server);
  // The power loss is a restart after the submission claims' lease: the claims have no holder left.
  await sleep(1100);
}, 60_000);

afterAll(async () => {
  relay.close();
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
  folders = [];
});

/** Opens a copy of the table whose newest log is cut at `offset`, runs the start-up reconciliation. */
const restartCutAt = async (offset: number) => {
  const folder = await mkdtemp(join(tmpdir(), 'torn-table-cut-'));
  folders.push(folder);
  await cp(pristine, folder, { recursive: true });
  await truncate(newestLog(folder), offset);
  const server = await open(folder);
  try {
    // A cut before the table's creation leaves none: the runtime makes it at start, as here. A cut
    // inside it leaves it never activated, so it can hold nothing: the runtime starts that afresh.
    try {
      await ensureTable(createDynamoDbClient(`http://127.0.0.1:${port}`), TABLE);
    } catch (error) {
      if (error instanceof TableStuckCreatingError) return { repaired: 0, unfinished: [], left: 0 };
      throw error;
    }
    const { runner } = await startRunner();
    const run = reconcile(() => ({
      ...workflowDependencies(),
      workflow: runner,
      announcer: publishingAnnouncer,
      events: operationsEventPublisher(),
    }));
    const report = await run({ everything: true });
    await runner.idle();
    const transfers = await transfersInTable();
    const unfinished = transfers
      .filter((item) => !FINAL_STATUSES.has(item.status))
      .map((item) => `${item.pk} ${item.status}`);
    // Once repaired, the index agrees with every record.
    const left = await lifecycleStore().realign(new Date());
    return { repaired: report.repaired, unfinished, left };
  } finally {
    await close(server);
    await rm(folder, { recursive: true, force: true });
  }
};

it('leaves no transfer short of a final status wherever a power loss cuts the table log', async () => {
  const log = await readFile(newestLog(pristine));
  const boundaries = recordBoundaries(log);
  expect(boundaries.length).toBeGreaterThan(50);
  // Every record boundary from the first transfer's creation on (bounded: every n-th when many),
  // each also cut one byte in, plus random offsets.
  const step = Math.max(1, Math.ceil(boundaries.length / 30));
  const offsets = new Set<number>();
  for (let index = 0; index < boundaries.length; index += step) {
    const boundary = boundaries[index] as number;
    offsets.add(boundary);
    if (boundary + 1 < log.length) offsets.add(boundary + 1);
  }
  offsets.add(log.length);
  for (let draw = 0; draw < 10; draw++) offsets.add(Math.floor(Math.random() * log.length));

  let repairedSomewhere = 0;
  for (const offset of [...offsets].sort((a, b) => a - b)) {
    const outcome = await restartCutAt(offset);
    expect(outcome.unfinished, `cut at ${offset} of ${log.length}`).toEqual([]);
    expect(outcome.left, `cut at ${offset}`).toBe(0);
    if (outcome.repaired > 0) repairedSomewhere += 1;
  }
  // The cuts did reach the half-written states the repair is for.
  expect(repairedSomewhere).toBeGreaterThan(0);
}, 600_000);
