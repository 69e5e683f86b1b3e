import { spawn } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { collectOutput, scriptArguments } from '#local/service-process';
import { serviceProcesses } from '../../scripts/bench/processes.ts';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import {
  callApi,
  createClient,
  LOCAL_CLIENT,
  type LocalService,
  removeDataDir,
  requestToken,
  startLocalService,
} from './support/local-service.ts';

/**
 * The local table and data folder are the service's user's alone: the table answers on a Unix
 * socket inside the data folder and on no TCP port, and every file in the folder is 0600, every
 * folder 0700, whoever wrote it (the service, its table process, `npm run clients`).
 */

let service: LocalService | undefined;
const folders: string[] = [];

afterAll(async () => {
  await service?.stop();
  for (const folder of folders) await removeDataDir(folder);
});

/** Every entry under `root` with its permission bits, as `path mode` lines (sockets and links apart). */
const modesUnder = async (root: string): Promise<Map<string, { mode: number; kind: string }>> => {
  const found = new Map<string, { mode: number; kind: string }>();
  const visit = async (path: string) => {
    const stat = await lstat(path);
    const kind = stat.isDirectory()
      ? 'folder'
      : stat.isFile()
        ? 'file'
        : stat.isSocket()
          ? 'socket'
          : 'other';
    found.set(relative(root, path) || '.', { mode: stat.mode & 0o777, kind });
    if (stat.isDirectory()) for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(root);
  return found;
};

const expectOwnerOnly = async (root: string) => {
  const entries = await modesUnder(root);
  const loose = [...entries]
    .filter(([, { mode, kind }]) =>
      kind === 'folder' ? mode !== 0o700 : kind === 'file' ? mode !== 0o600 : (mode & 0o077) !== 0,
    )
    .map(([path, { mode, kind }]) => `${kind} ${path} ${mode.toString(8)}`);
  expect(loose).toEqual([]);
  return entries;
};

/** Inodes of the TCP sockets listening on this machine (IPv4 and IPv6). */
const listeningTcpInodes = async (): Promise<Set<string>> => {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).trim().split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // st 0A is LISTEN; the inode is the tenth field.
      if (fields[3] === '0A' && fields[9] !== undefined) inodes.add(fields[9]);
    }
  }
  return inodes;
};

/** Inodes of the sockets a process holds open. */
const socketInodesOf = async (pid: number): Promise<string[]> => {
  const inodes: string[] = [];
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined) inodes.push(inode);
  }
  return inodes;
};

const clients = async (dataDir: string, ...args: string[]) => {
  const child = spawn(process.execPath, [...scriptArguments('scripts/clients.ts'), ...args], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collectOutput(child);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, output()).toBe(0);
};

it('keeps the table on a socket only the service user reaches, and every file of the data folder 0600, every folder 0700', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'credit-transfers-private-'));
  folders.push(dataDir);
  // A folder as an older start or a careless copy left it: open to everyone.
  await chmod(dataDir, 0o755);
  await mkdir(join(dataDir, 'notes'), { mode: 0o755 });
  await chmod(join(dataDir, 'notes'), 0o755);
  await writeFile(join(dataDir, 'notes', 'backup-log.txt'), 'kept\n', { mode: 0o644 });
  await chmod(join(dataDir, 'notes', 'backup-log.txt'), 0o644);

  service = await startLocalService({ dataDir, env: { SANDBOX_SETTLEMENT_SECONDS: '1' } });
  // The start says what it tightened.
  expect(service.output()).toMatch(/readable by others, now the owner's only/);
  expect(service.output()).toContain('notes/backup-log.txt (was 644)');

  // The table process listens on no TCP port; its socket is inside the data folder.
  const table = (await serviceProcesses(service.pid)).find(({ role }) => role.startsWith('table'));
  expect(table).toBeDefined();
  const listening = await listeningTcpInodes();
  const tableInodes = await socketInodesOf(table?.pid ?? 0);
  expect(tableInodes.length).toBeGreaterThan(0);
  expect(tableInodes.filter((inode) => listening.has(inode))).toEqual([]);
  expect(relative(dataDir, service.tableSocket)).toBe('dynamodb.sock');
  expect(service.output()).not.toMatch(/DynamoDB \(dynalite\):\s+http/);

  // Work that writes every kind of file: transfers (table, events, executions) and clients.
  const token = await requestToken(service.baseUrl, 'transactions:read transactions:write');
  const created = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token,
    body: minimalCreditTransfer(),
  });
  expect(created.status).toBe(202);
  // Settled, so the service writes no more events while the tools do.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await callApi(
      service.baseUrl,
      `/v1/payments/credit-transfers/${created.body.paymentId}/status`,
      {
        token,
      },
    );
    if (status.body.status === 'AcceptedSettlementCompleted') break;
    if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify(status.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // The tools write the audit events: a fresh events file is theirs to create.
  await rm(join(dataDir, 'events.jsonl'), { force: true });
  await createClient(service, {
    clientId: 'private-client',
    clientSecret: 'private-client-secret-0123456789',
    scope: 'transactions:read',
    tenant: 'private',
  });
  await clients(
    dataDir,
    'create',
    '--client-id',
    'private-two',
    '--scope',
    'transactions:read',
    '--tenant',
    'private',
  );
  await clients(dataDir, 'list');

  const entries = await expectOwnerOnly(dataDir);
  expect(entries.get('events.jsonl')?.kind).toBe('file');
  expect(entries.get('dynamodb')?.kind).toBe('folder');
  expect(entries.get('dynamodb.sock')?.kind).toBe('socket');
}, 120_000);

it('shows the seeded client secret in the banner only when it is the built-in default', async () => {
  expect(service).toBeDefined();
  // The suite's service was started with a secret of its own (LOCAL_CLIENT_SECRET).
  expect(service?.output()).toContain(`client_id=${LOCAL_CLIENT.clientId}`);
  expect(service?.output()).not.toContain(LOCAL_CLIENT.clientSecret);
  expect(service?.output()).toContain('client_secret as set in LOCAL_CLIENT_SECRET');

  const defaults = await startLocalService({ env: { LOCAL_CLIENT_ID: '', LOCAL_CLIENT_SECRET: '' } });
  folders.push(defaults.dataDir);
  try {
    expect(defaults.output()).toContain('client_id=local-client client_secret=local-client-secret ');
  } finally {
    await defaults.stop();
  }
}, 120_000);
