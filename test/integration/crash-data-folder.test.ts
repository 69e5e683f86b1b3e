import { generateKeyPairSync } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import { collectOutput, spawnService } from '#local/service-process';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import {
  callApi,
  type LocalService,
  removeDataDir,
  requestToken,
  startLocalService,
} from './support/local-service.ts';

const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await removeDataDir(folder);
});

const dataFolder = async () => {
  const folder = await mkdtemp(join(tmpdir(), 'credit-transfers-damaged-'));
  folders.push(folder);
  return folder;
};

/** `npm start`'s script on `dataDir`, expected to refuse: its exit code and output (null if it hung). */
const startExpectingRefusal = async (dataDir: string) => {
  const child = spawnService(dataDir);
  const output = collectOutput(child);
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(killer);
  const lines = output().trim().split('\n');
  return { code, output: output(), lastLine: lines.at(-1) ?? '' };
};

const expectRefusal = (
  outcome: Awaited<ReturnType<typeof startExpectingRefusal>>,
  file: string,
  voids: RegExp,
) => {
  expect(outcome.code, outcome.output).not.toBe(0);
  expect(outcome.code, outcome.output).not.toBeNull();
  expect(outcome.lastLine).toContain(file);
  expect(outcome.lastLine).toMatch(/restore it from a backup/);
  expect(outcome.lastLine).toMatch(/remove it to start afresh/);
  expect(outcome.lastLine).toMatch(voids);
  // One line for the operator, no stack trace.
  expect(outcome.output).not.toMatch(/^\s+at /m);
  expect(outcome.output).not.toContain('listening on');
};

const SMALL_RSA = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;
// ES256 signs with P-256: a key on another curve cannot sign tokens.
const EC_KEY = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;

describe('a damaged secret in the data folder', () => {
  const signingKeyCases: [string, string | 'directory'][] = [
    ['not PEM', 'this is not a key\n'],
    ['empty', ''],
    ['cut short', '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n'],
    ['an RSA key too small', SMALL_RSA],
    ['neither RSA nor EC P-256', EC_KEY],
    ['unreadable', 'directory'],
  ];
  for (const [label, content] of signingKeyCases) {
    it(`refuses to start, naming signing-key.pem, when it is ${label}; the file stays as it was`, async () => {
      const dataDir = await dataFolder();
      const path = join(dataDir, 'signing-key.pem');
      if (content === 'directory') await mkdir(path);
      else await writeFile(path, content);

      const outcome = await startExpectingRefusal(dataDir);

      expectRefusal(outcome, path, /every access token issued before stops working/);
      if (content !== 'directory') expect(await readFile(path, 'utf8')).toBe(content);
    });
  }

  // A valid current key is made at start; the previous one is never made, only checked.
  const previousKeyCases = signingKeyCases.filter(([label]) =>
    ['not PEM', 'empty', 'an RSA key too small', 'unreadable'].includes(label),
  );
  for (const [label, content] of previousKeyCases) {
    it(`refuses to start, naming signing-key.previous.pem, when it is ${label}; the file stays as it was`, async () => {
      const dataDir = await dataFolder();
      const path = join(dataDir, 'signing-key.previous.pem');
      if (content === 'directory') await mkdir(path);
      else await writeFile(path, content);

      const outcome = await startExpectingRefusal(dataDir);

      expectRefusal(outcome, path, /the tokens signed before the last key rotation stop working/);
      if (content !== 'directory') expect(await readFile(path, 'utf8')).toBe(content);
    });
  }

  const cursorCases: [string, string | 'directory'][] = [
    ['empty', ''],
    ['too short', 'c2hvcnQ'],
    ['not base64url', `${'!'.repeat(43)}`],
    ['unreadable', 'directory'],
  ];
  for (const [label, content] of cursorCases) {
    it(`refuses to start, naming list-cursor-secret, when it is ${label}; the file stays as it was`, async () => {
      const dataDir = await dataFolder();
      const path = join(dataDir, 'list-cursor-secret');
      if (content === 'directory') await mkdir(path);
      else await writeFile(path, content);

      const outcome = await startExpectingRefusal(dataDir);

      expectRefusal(outcome, path, /every list cursor handed out before is refused/);
      if (content !== 'directory') expect(await readFile(path, 'utf8')).toBe(content);
    });
  }
});

describe('a damaged limits file in the data folder', () => {
  for (const [label, content] of [
    ['not JSON', '{"tenants": {"acme": '],
    ['a limit out of range', '{"tenants": {"acme": {"ratePerSecond": -1, "burst": 2}}}'],
  ]) {
    it(`refuses to start, naming tenant-rate-limits.json, when it is ${label}; the file stays as it was`, async () => {
      const dataDir = await dataFolder();
      const path = join(dataDir, 'tenant-rate-limits.json');
      await writeFile(path, content as string);

      const outcome = await startExpectingRefusal(dataDir);

      expectRefusal(outcome, path, /every tenant's own limit is dropped/);
      expect(await readFile(path, 'utf8')).toBe(content);
    });
  }
});

describe('a damaged table file', () => {
  it('refuses to start, naming the table folder, when its files cannot be opened', async () => {
    const dataDir = await dataFolder();
    const service = await startLocalService({ dataDir });
    await service.stop();
    const tableFolder = join(dataDir, 'dynamodb');
    // The file naming the current manifest, overwritten with something else.
    await writeFile(join(tableFolder, 'CURRENT'), 'garbage\n');

    const outcome = await startExpectingRefusal(dataDir);

    expectRefusal(outcome, tableFolder, /every client, payment and idempotency key stored locally is lost/);
  }, 90_000);

  it('refuses to start, naming the table folder, when a data block of it is corrupt', async () => {
    const dataDir = await dataFolder();
    // Two starts: the second writes the first one's log out to a table file (.ldb).
    for (let start = 0; start < 2; start++) await (await startLocalService({ dataDir })).stop();
    const tableFolder = join(dataDir, 'dynamodb');
    const tables = (await readdir(tableFolder)).filter((name) => name.endsWith('.ldb'));
    expect(tables.length).toBeGreaterThan(0);
    for (const name of tables) {
      const file = await open(join(tableFolder, name), 'r+');
      await file.write(Buffer.alloc(200, 0x41), 0, 200, 100);
      await file.close();
    }

    const outcome = await startExpectingRefusal(dataDir);

    expectRefusal(outcome, tableFolder, /every client, payment and idempotency key stored locally is lost/);
    expect(outcome.lastLine).toMatch(/Corruption/);
  }, 120_000);
});

describe('a table of the old key layout', () => {
  it('refuses to start, naming the table folder, rather than read its payments as absent; the items stay', async () => {
    const dataDir = await dataFolder();
    const service = await startLocalService({ dataDir });
    // A payment as the layout before each kind had its own prefix stored it.
    const old = { pk: 'TENANT#local#CT#old-payment', sk: 'CREDIT_TRANSFER' };
    await createDocumentClient(undefined, service.tableSocket).put({
      TableName: 'credit-transfers',
      Item: { ...old, status: 'Received' },
    });
    await service.stop();
    const tableFolder = join(dataDir, 'dynamodb');

    const outcome = await startExpectingRefusal(dataDir);

    expect(outcome.code, outcome.output).not.toBe(0);
    expect(outcome.code, outcome.output).not.toBeNull();
    expect(outcome.lastLine).toContain(tableFolder);
    expect(outcome.lastLine).toMatch(/holds 1 items of the old key layout \(partition keys under TENANT#\)/);
    expect(outcome.lastLine).toMatch(/or remove \S+ to start afresh/);
    expect(outcome.output).not.toMatch(/^\s+at /m);
    expect(outcome.output).not.toContain('listening on');
  }, 90_000);
});

describe('a torn last line in the event log', () => {
  let service: LocalService | undefined;
  afterAll(async () => {
    await service?.stop();
  });

  it('is moved beside the log at start, so the log holds whole lines and the next event is whole', async () => {
    const dataDir = await dataFolder();
    const whole = [
      JSON.stringify({ id: 'e1', detail: { paymentId: 'before-1' } }),
      JSON.stringify({ id: 'e2', detail: { paymentId: 'before-2' } }),
    ];
    const torn = '{"id":"e3","source":"credit-transfers","detail":{"payme';
    const events = join(dataDir, 'events.jsonl');
    await writeFile(events, `${whole.join('\n')}\n${torn}`);
    // Set aside by an earlier start: appended to, never overwritten.
    await appendFile(`${events}.torn`, 'earlier torn line\n');

    service = await startLocalService({ dataDir });

    const token = await requestToken(service.baseUrl, 'transactions:read transactions:write');
    const created = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
      token,
      body: minimalCreditTransfer(),
    });
    expect(created.status).toBe(202);
    const deadline = Date.now() + 60_000;
    let status = '';
    while (!FINAL.has(status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const reply = await callApi(
        service.baseUrl,
        `/v1/payments/credit-transfers/${created.body.paymentId}/status`,
        { token },
      );
      status = reply.body.status;
    }
    expect(FINAL.has(status)).toBe(true);

    // The workflow publishes a status change after writing it: the final event follows the report.
    const published = (log: string) =>
      log
        .split('\n')
        .some((line) => line.includes(created.body.paymentId) && line.includes(`"status":"${status}"`));
    let text = await readFile(events, 'utf8');
    while (!published(text) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      text = await readFile(events, 'utf8');
    }
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.trimEnd().split('\n');
    // Every line is whole JSON; the lines from before are kept as they were.
    const parsed = lines.map(
      (line) => JSON.parse(line) as { detail: { paymentId: string; status?: string } },
    );
    expect(lines.slice(0, 2)).toEqual(whole);
    const ours = parsed.filter((event) => event.detail.paymentId === created.body.paymentId);
    expect(ours.map((event) => event.detail.status)).toContain(status);
    expect(ours[0]?.detail.status).toBe('Received');
    expect(await readFile(`${events}.torn`, 'utf8')).toBe(`earlier torn line\n${torn}\n`);
    expect(service.output()).toMatch(/events\.jsonl: its last line was torn by a crash/);
  }, 90_000);
});
