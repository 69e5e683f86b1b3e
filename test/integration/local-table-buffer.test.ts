import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import { type DynaliteProcess, startDynalite } from '#local/dynalite-process';
import { createDynamoDbClient, ensureTable } from '#local/table';

/**
 * The local table holds up to 32 MB of writes in LevelDB's memory before it writes a table file.
 * With dynalite's default of 4 MB, every status change of a transfer under load reached disk and
 * was compacted again and again (`npm run bench:load`, decisions).
 */

const TABLE = 'credit-transfers';
let dataDir: string | undefined;
let dynalite: DynaliteProcess | undefined;

afterAll(async () => {
  dynalite?.child.kill();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it('keeps 8 MB of writes in memory, with no table file on disk, and reads them back', async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'credit-transfers-buffer-'));
  const socket = join(dataDir, 'dynamodb.sock');
  dynalite = await startDynalite({ socket, path: join(dataDir, 'dynamodb') });
  await ensureTable(createDynamoDbClient({ socket }), TABLE);
  const documents = createDocumentClient(undefined, socket);

  const filler = 'x'.repeat(100_000);
  for (let index = 0; index < 80; index++) {
    await documents.put({ TableName: TABLE, Item: { pk: `FILL#${index}`, sk: 'FILL', filler } });
  }

  const tableFiles = (await readdir(join(dataDir, 'dynamodb'))).filter((name) => name.endsWith('.ldb'));
  expect(tableFiles).toEqual([]);
  const last = await documents.get({ TableName: TABLE, Key: { pk: 'FILL#79', sk: 'FILL' } });
  expect(last.Item?.filler).toBe(filler);
});
