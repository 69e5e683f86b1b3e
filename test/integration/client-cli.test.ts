import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../client/cli-process.ts';
import { createClient, LOCAL_CLIENT } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const service = useLocalService();
let env: Record<string, string>;
let folder: string;

const transferFile = async (debtorAccountId: string, extra: Record<string, unknown> = {}) => {
  const path = join(folder, `${randomUUID()}.json`);
  await writeFile(
    path,
    JSON.stringify({
      paymentMethod: 'CreditTransfer',
      amount: '25.00',
      currency: 'EUR',
      debtorAccountId,
      ...extra,
    }),
  );
  return path;
};

const initiate = async (debtorAccountId: string, extra: Record<string, unknown> = {}) => {
  const result = await runCli(
    ['initiate', '--file', await transferFile(debtorAccountId, extra), '--format', 'json'],
    env,
  );
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { paymentId: string; status: string };
};

/** Parses RFC 4180 text (quoted fields may hold commas, quotes and line breaks). */
const parseCsv = (text: string): string[][] => {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += char;
  }
  return rows;
};

beforeAll(async () => {
  env = cliEnv(service.baseUrl, LOCAL_CLIENT);
  folder = await mkdtemp(join(tmpdir(), 'cli-'));
});

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('CLI configuration and errors', () => {
  it('names every missing setting on one line and exits non-zero', async () => {
    const result = await runCli(['list'], {});
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    for (const name of [
      'CREDIT_TRANSFERS_API_URL',
      'CREDIT_TRANSFERS_CLIENT_ID',
      'CREDIT_TRANSFERS_CLIENT_SECRET',
    ])
      expect(result.stderr).toContain(name);
    expect(result.stdout).toBe('');
  });

  it('takes the settings from flags as well', async () => {
    const result = await runCli(
      [
        '--api-url',
        service.baseUrl,
        '--client-id',
        LOCAL_CLIENT.clientId,
        '--client-secret',
        LOCAL_CLIENT.clientSecret,
        'token',
      ],
      {},
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('shows a refused client in one line without the secret or a stack', async () => {
    const wrongSecret = 'a-wrong-secret-that-must-stay-hidden';
    const result = await runCli(['token'], { ...env, CREDIT_TRANSFERS_CLIENT_SECRET: wrongSecret });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('invalid_client');
    expect(result.stderr + result.stdout).not.toContain(wrongSecret);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("shows the service's error code and description for a refused transfer", async () => {
    const result = await runCli(['initiate', '--file', await transferFile('acc-1', { amount: 'ten' })], env);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/invalid_request: .+/);
    expect(result.stderr).toContain('amount');
  });

  it('names the unreachable URL and the call that failed', async () => {
    // A port nothing listens on: taken, then given back.
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const closed = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.close();
    const result = await runCli(['list'], { ...env, CREDIT_TRANSFERS_API_URL: closed });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(
      `The token endpoint (POST ${closed}/oauth/token) could not be reached (ECONNREFUSED)`,
    );

    const api = await runCli(['list'], {
      ...env,
      CREDIT_TRANSFERS_API_URL: closed,
      CREDIT_TRANSFERS_TOKEN_URL: `${service.baseUrl}/oauth/token`,
    });
    expect(api.stderr).toContain(`The API (GET ${closed}/v1/payments/credit-transfers`);
  });

  it('with a path prefix, a 404 says whether the token call or the API call failed', async () => {
    const prefixed = `${service.baseUrl}/payments-api`;
    const token = await runCli(['list'], { ...env, CREDIT_TRANSFERS_API_URL: prefixed });
    expect(token.code).toBe(1);
    expect(token.stderr).toContain(`Refused (404) by the token endpoint (POST ${prefixed}/oauth/token)`);
    expect(token.stderr).toContain('CREDIT_TRANSFERS_TOKEN_URL');

    const api = await runCli(['list'], {
      ...env,
      CREDIT_TRANSFERS_API_URL: prefixed,
      CREDIT_TRANSFERS_TOKEN_URL: `${service.baseUrl}/oauth/token`,
    });
    expect(api.code).toBe(1);
    expect(api.stderr).toContain(`Refused (404) by the API (GET ${prefixed}/v1/payments/credit-transfers`);
  });

  it.each(['token', 'initiate', 'status', 'list', 'cancel', 'poll'])(
    'shows --format and the environment variables in the help of %s',
    async (command) => {
      const result = await runCli([command, '--help'], {});
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('--format <format>');
      for (const name of [
        'CREDIT_TRANSFERS_API_URL',
        'CREDIT_TRANSFERS_TOKEN_URL',
        'CREDIT_TRANSFERS_CLIENT_ID',
        'CREDIT_TRANSFERS_CLIENT_SECRET',
        'CREDIT_TRANSFERS_SCOPE',
      ])
        expect(result.stdout).toContain(name);
      if (command === 'poll') expect(result.stdout).toMatch(/--stuck-after <duration>[\s\S]*default: 24h/);
    },
  );

  it('refuses a file that is not JSON in one line', async () => {
    const path = join(folder, 'broken.json');
    await writeFile(path, '{ not json');
    const result = await runCli(['initiate', '--file', path], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: .*broken\.json is not JSON/);
  });
});

describe('CLI commands', () => {
  it('initiates with an idempotency key: the repeat answers the same payment', async () => {
    const file = await transferFile(`acc-${randomUUID().slice(0, 8)}`);
    const key = randomUUID();
    const first = await runCli(
      ['initiate', '--file', file, '--idempotency-id', key, '--format', 'json'],
      env,
    );
    const again = await runCli(
      ['initiate', '--file', file, '--idempotency-id', key, '--format', 'json'],
      env,
    );
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(again.stdout).paymentId).toBe(JSON.parse(first.stdout).paymentId);
  });

  it('status --watch prints one JSON line per change and exits 0 at the final status', async () => {
    const { paymentId } = await initiate(`acc-${randomUUID().slice(0, 8)}`);
    const result = await runCli(['status', paymentId, '--watch', '--format', 'json'], env);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.at(-1)).toMatchObject({ paymentId, status: 'AcceptedSettlementCompleted' });
    const statuses = lines.map((line) => line.status);
    expect(new Set(statuses).size).toBe(statuses.length);
    // Piped: no spinner frames or terminal codes.
    expect(result.stdout).not.toContain('\r');
    expect(result.stdout).not.toContain('\u001b');
  });

  it('status --watch shows a spinner on a terminal while it waits', async () => {
    const { paymentId } = await initiate(`acc-${randomUUID().slice(0, 8)}-hold`);
    // `script` runs the CLI on a pseudo-terminal, as a person at a terminal would.
    const command = `${process.execPath} --import tsx client/src/cli.ts status ${paymentId} --watch --timeout 3s`;
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        cwd: ROOT,
        env: { ...process.env, ...env },
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.once('close', (code) => resolve({ code, output }));
    });
    expect(result.output).toMatch(new RegExp(`\r[|/\\-] waiting for ${paymentId}`));
    expect(result.output).toContain('AcceptedSettlementInProcess');
    expect(result.output).toMatch(/Transfer .* is still AcceptedSettlementInProcess/);
    expect(result.code).toBe(1);
  });

  it('status --watch in a table shows a header row, then a rejection with its reason', async () => {
    const { paymentId } = await initiate(`acc-${randomUUID().slice(0, 8)}-blocked`);
    const result = await runCli(['status', paymentId, '--watch'], env);
    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^date\s+paymentId\s+status\s+statusReason\s+statusReasonCode$/);
    expect(rows.at(-1)).toMatch(new RegExp(`${paymentId}\\s+Rejected\\s+BlockedAccount\\s+AC06$`));
    // Columns line up under the header.
    expect(rows.at(-1)?.indexOf('Rejected')).toBe(rows[0]?.indexOf('status '));

    const failing = await runCli(['status', paymentId, '--watch', '--fail-unless-settled'], env);
    expect(failing.code).toBe(4);
    expect(failing.stderr).toContain(`Not settled: ${paymentId} is Rejected (BlockedAccount AC06)`);
    const once = await runCli(['status', paymentId, '--fail-unless-settled'], env);
    expect(once.code).toBe(4);
  });

  it('initiate --wait prints the final status; --fail-unless-settled exits 4 on a rejection', async () => {
    const settled = await runCli(
      [
        'initiate',
        '--file',
        await transferFile(`acc-${randomUUID().slice(0, 8)}`),
        '--wait',
        '--format',
        'json',
      ],
      env,
    );
    expect(settled.code, settled.stderr).toBe(0);
    expect(JSON.parse(settled.stdout)).toMatchObject({ status: 'AcceptedSettlementCompleted' });

    const rejected = await runCli(
      [
        'initiate',
        '--file',
        await transferFile(`acc-${randomUUID().slice(0, 8)}-closed`),
        '--wait',
        '--fail-unless-settled',
        '--format',
        'json',
      ],
      env,
    );
    expect(rejected.code).toBe(4);
    expect(JSON.parse(rejected.stdout)).toMatchObject({
      status: 'Rejected',
      statusReason: 'ClosedAccountNumber',
    });
  });

  it('poll prints a header row in a table', async () => {
    const client = {
      clientId: `cli-poll-${randomUUID().slice(0, 8)}`,
      clientSecret: `secret-${randomUUID()}`,
    };
    await createClient(service, {
      ...client,
      scope: 'transactions:read transactions:write',
      tenant: client.clientId,
    });
    const tenantEnv = cliEnv(service.baseUrl, client);
    const made = await runCli(['initiate', '--file', await transferFile('acc-poll-1')], tenantEnv);
    expect(made.code, made.stderr).toBe(0);
    const result = await runCli(['poll', '--state', join(folder, `${client.clientId}.json`)], tenantEnv);
    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout.trim().split('\n');
    expect(rows[0]).toMatch(
      /^changeId\s+paymentId\s+previousStatus\s+status\s+statusReason\s+statusReasonCode\s+date$/,
    );
    expect(rows).toHaveLength(2);
  });

  it('list --status lists only the transfers in that status, and refuses a status that does not exist', async () => {
    const account = `acc-${randomUUID().slice(0, 8)}`;
    const settled = await initiate(account);
    const blocked = await initiate(`${account}-blocked`);
    for (const { paymentId } of [settled, blocked])
      expect((await runCli(['status', paymentId, '--watch'], env)).code).toBe(0);
    const rejected = await runCli(['list', '--status', 'Rejected', '--all', '--format', 'json'], env);
    expect(rejected.code, rejected.stderr).toBe(0);
    const ids = JSON.parse(rejected.stdout).map(
      (item: { paymentId: string; status: string }) => item.paymentId,
    );
    expect(ids).toContain(blocked.paymentId);
    expect(ids).not.toContain(settled.paymentId);
    const byFilter = await runCli(
      ['list', '--status.eq', 'Rejected', '--debtorAccountId.eq', `${account}-blocked`, '--format', 'json'],
      env,
    );
    expect(JSON.parse(byFilter.stdout).map((item: { paymentId: string }) => item.paymentId)).toEqual([
      blocked.paymentId,
    ]);

    const unknown = await runCli(['list', '--status', 'Settled'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Allowed choices are Pending, Received');
    const refused = await runCli(['list', '--status.eq', 'Settled'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Refused \(400\) by the API .*invalid_request.*status\.eq/);
  });

  it('list --all follows every cursor, in each format', async () => {
    const account = `acc-${randomUUID().slice(0, 8)}`;
    const made = [];
    for (let i = 0; i < 5; i++)
      made.push((await initiate(account, { purpose: `Invoice ${i}, "quoted"` })).paymentId);
    const newestFirst = [...made].reverse();
    const filters = ['list', '--debtorAccountId.eq', account, '--limit', '2'];

    const onePage = await runCli([...filters, '--format', 'json'], env);
    expect(JSON.parse(onePage.stdout)).toHaveLength(2);
    expect(onePage.stderr).toContain('--cursor');

    const json = await runCli([...filters, '--all', '--format', 'json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).map((item: { paymentId: string }) => item.paymentId)).toEqual(newestFirst);

    // CSV shows the columns a reconciliation reads by default, every row filled where it matters.
    const csv = await runCli([...filters, '--all', '--format', 'csv'], env);
    expect(csv.code, csv.stderr).toBe(0);
    const rows = parseCsv(csv.stdout);
    expect(rows[0]).toEqual([
      'paymentId',
      'status',
      'statusReason',
      'statusReasonCode',
      'amount',
      'currency',
      'creditor.name',
      'creditorAccountId',
      'debtorAccountId',
      'valueDate',
      'date',
    ]);
    expect(rows.slice(1).map((row) => row[0])).toEqual(newestFirst);
    expect(rows.slice(1).map((row) => [row[4], row[5], row[8]])).toEqual(
      newestFirst.map(() => ['25.00', 'EUR', account]),
    );

    // --columns: any field, in the order named, quoted as RFC 4180 asks.
    const chosen = await runCli(
      [...filters, '--all', '--format', 'csv', '--columns', 'purpose,paymentId'],
      env,
    );
    expect(chosen.code, chosen.stderr).toBe(0);
    const chosenRows = parseCsv(chosen.stdout);
    expect(chosenRows[0]).toEqual(['purpose', 'paymentId']);
    expect(chosenRows.slice(1)).toEqual(newestFirst.map((id, i) => [`Invoice ${4 - i}, "quoted"`, id]));
    const every = await runCli([...filters, '--format', 'csv', '--columns', 'all'], env);
    expect(parseCsv(every.stdout)[0]).toHaveLength(29);

    // An unknown column is a usage error: named, with the columns there are, and nothing printed.
    const unknown = await runCli([...filters, '--format', 'csv', '--columns', 'paymentId,creditorName'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain("unknown column 'creditorName'; the columns are paymentId, status");
    expect(unknown.stderr).toContain('creditor.name');

    const table = await runCli([...filters, '--all'], env);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^paymentId\s+status/);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(newestFirst);
  });

  it('cancels a held transfer, which then ends Cancelled', async () => {
    const { paymentId } = await initiate(`acc-${randomUUID().slice(0, 8)}-hold`);
    const cancel = await runCli(['cancel', paymentId, '--reason', 'Ordered twice', '--format', 'json'], env);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout).paymentId).toBe(paymentId);
    const watch = await runCli(['status', paymentId, '--watch', '--format', 'json'], env);
    expect(watch.code, watch.stderr).toBe(0);
    expect(JSON.parse(watch.stdout.trim().split('\n').at(-1) ?? '')).toMatchObject({
      status: 'Cancelled',
      statusReason: 'RequestedByCustomer',
    });
  });

  it('cancelling a settled transfer prints the refusal', async () => {
    const { paymentId } = await initiate(`acc-${randomUUID().slice(0, 8)}`);
    await runCli(['status', paymentId, '--watch'], env);
    const result = await runCli(['cancel', paymentId], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^Error: Refused \\(409\\) by the API \\(POST .*/${paymentId}/cancellation\\): payment_not_cancellable: .+\n$`,
      ),
    );
  });
});
