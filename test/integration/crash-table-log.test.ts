import { cp, mkdtemp, readFile, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import { parseCreditTransferKey } from '#adapters/table/keys';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { newestLog, recordBoundaries } from '../unit/workflow/leveldb-log.ts';
import {
  callApi,
  type LocalService,
  removeDataDir,
  requestToken,
  socketGone,
  startLocalService,
} from './support/local-service.ts';

/**
 * A power loss keeps a prefix of the table's write-ahead log (LevelDB under DATA_DIR/dynamodb),
 * which may hold an index entry without the item write that went with it. Whatever prefix
 * survives, the restarted service leaves no transfer it still holds short of a final status.
 * (test/unit/workflow/torn-table-log.test.ts cuts at every record boundary, in process.)
 */

const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);
const ENV = { SANDBOX_SETTLEMENT_SECONDS: '1', SANDBOX_HOLD_SECONDS: '3' };

const folders: string[] = [];
let service: LocalService | undefined;

afterAll(async () => {
  await service?.stop();
  for (const folder of folders) await removeDataDir(folder);
});

const paymentIdsInTable = async (socket: string): Promise<string[]> => {
  const items =
    (
      await createDocumentClient(undefined, socket).scan({
        TableName: 'credit-transfers',
        ConsistentRead: true,
        FilterExpression: 'sk = :sk',
        ExpressionAttributeValues: { ':sk': 'CREDIT_TRANSFER' },
      })
    ).Items ?? [];
  return items.map((item) => parseCreditTransferKey(String(item.pk)).paymentId);
};

it('drives every transfer the table still holds to a final status after a power loss cuts its log anywhere', async () => {
  const original = await mkdtemp(join(tmpdir(), 'credit-transfers-torn-'));
  folders.push(original);
  service = await startLocalService({ dataDir: original, env: ENV });
  const token = await requestToken(service.baseUrl, 'transactions:read transactions:write');
  const accounts = ['001-DDA-01-123456', '001-DDA-01-hold', '001-DDA-01-blocked', '001-DDA-01-777777'];
  const created = await Promise.all(
    Array.from({ length: 8 }, (_, index) =>
      callApi(service?.baseUrl as string, TRANSFERS, {
        token,
        body: minimalCreditTransfer({ debtorAccountId: accounts[index % accounts.length] }),
      }),
    ),
  );
  expect(created.map((reply) => reply.status)).toEqual(created.map(() => 202));
  await callApi(service.baseUrl, `${TRANSFERS}/${created[1]?.body.paymentId}/cancellation`, {
    method: 'POST',
    token,
  });
  // The whole lifecycle of each into the log, then the crash.
  const deadline = Date.now() + 60_000;
  for (const reply of created) {
    for (;;) {
      const status = await callApi(service.baseUrl, `${TRANSFERS}/${reply.body.paymentId}/status`, { token });
      if (FINAL.has(status.body.status)) break;
      if (Date.now() > deadline) throw new Error(`${reply.body.paymentId} not final`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const { tableSocket } = service;
  await service.kill();
  service = undefined;
  expect(await socketGone(tableSocket)).toBe(true);

  const log = await readFile(newestLog(join(original, 'dynamodb')));
  const boundaries = recordBoundaries(log);
  const at = (fraction: number) => boundaries[Math.floor(boundaries.length * fraction)] as number;
  // Inside the table's creation (its first records), a record boundary, one byte into a record,
  // and a random place: a power loss picks none.
  const cuts = [
    boundaries[1] as number,
    at(0.5),
    at(0.7) + 1,
    Math.floor(log.length * (0.3 + Math.random() * 0.6)),
  ];

  const repairedCounts: number[] = [];
  for (const cut of cuts) {
    const dataDir = await mkdtemp(join(tmpdir(), 'credit-transfers-cut-'));
    folders.push(dataDir);
    await cp(original, dataDir, { recursive: true });
    await truncate(newestLog(join(dataDir, 'dynamodb')), cut);

    service = await startLocalService({ dataDir, env: ENV });
    const restartedAt = Date.now();
    if (cut === cuts[0])
      expect(service.output()).toMatch(/the table was still being created when the service stopped/);
    const repaired = /Recovery check: (\d+) transfer/.exec(service.output())?.[1];
    expect(repaired, service.output()).toBeDefined();
    repairedCounts.push(Number(repaired));

    const after = await requestToken(service.baseUrl, 'transactions:read');
    const pending = new Set(await paymentIdsInTable(service.tableSocket));
    while (pending.size > 0 && Date.now() - restartedAt < 30_000) {
      for (const paymentId of [...pending]) {
        const reply = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: after });
        expect(reply.status).toBe(200);
        if (FINAL.has(reply.body.status)) pending.delete(paymentId);
      }
      if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect([...pending], `cut at ${cut} of ${log.length}`).toEqual([]);
    await service.stop();
    service = undefined;
  }
}, 300_000);
