import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireLock } from '../../client/src/files.ts';
import { CreditTransfersClient } from '../../client/src/index.ts';
import {
  cliCommand,
  cliEnv,
  ROOT,
  runCli,
  STALL,
  startCli,
  withoutCliSettings,
} from '../client/cli-process.ts';
import { startHttpProxy } from '../client/proxies.ts';
import { createClient } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const service = useLocalService();
let folder: string;

interface ChangeLine {
  changeId: string;
  paymentId: string;
  previousStatus: string | null;
  status: string;
  statusReason: string | null;
  date: string;
}

/** A client of a tenant of its own: the polling job sees only this test's transfers. */
const newTenantClient = async () => {
  const client = { clientId: `poll-${randomUUID().slice(0, 8)}`, clientSecret: `secret-${randomUUID()}` };
  await createClient(service, {
    ...client,
    scope: 'transactions:read transactions:write',
    tenant: client.clientId,
  });
  const sdk = new CreditTransfersClient({ baseUrl: service.baseUrl, ...client });
  const initiate = async (debtorAccountId: string) =>
    (
      await sdk.initiate({
        paymentMethod: 'CreditTransfer',
        amount: '5.00',
        currency: 'EUR',
        debtorAccountId,
      })
    ).paymentId;
  return { client, sdk, initiate };
};

const lines = (stdout: string): ChangeLine[] =>
  stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ChangeLine);

/** Every payment's reported changes form one chain: each starts where the one before ended. */
const expectOneChainEach = (changes: ChangeLine[]) => {
  const last = new Map<string, string>();
  for (const change of changes) {
    expect(change.previousStatus).toBe(last.get(change.paymentId) ?? null);
    expect(change.status).not.toBe(change.previousStatus);
    last.set(change.paymentId, change.status);
  }
  return last;
};

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'poll-'));
});

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

// Side by side: each test has a tenant and a state file of its own, and most of its time is a lock
// going stale (LOCK_STALE_MS) or a transfer settling.
describe.concurrent('cli poll', () => {
  it('reports each status change once across runs and exits 3 while a transfer is stuck', async () => {
    const { client, sdk, initiate } = await newTenantClient();
    const env = cliEnv(service.baseUrl, client);
    const state = join(folder, `${client.clientId}.json`);
    const poll = (stuckAfter: string) =>
      runCli(['poll', '--state', state, '--stuck-after', stuckAfter, '--format', 'json'], env);

    const settled = await initiate('acc-1');
    const blocked = await initiate('acc-2-blocked');
    const held = await initiate('acc-3-hold');

    const first = await poll('1h');
    expect(first.code, first.stderr).toBe(0);
    expect(
      lines(first.stdout)
        .map((change) => change.paymentId)
        .sort(),
    ).toEqual([settled, blocked, held].sort());

    await sdk.waitForFinalStatus(settled, { timeoutMs: 60_000 });
    await sdk.waitForFinalStatus(blocked, { timeoutMs: 60_000 });
    const heldReport = (await sdk.status(held)).report;
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(heldReport?.date ?? '') + 1500 - Date.now())),
    );

    const second = await poll('1s');
    expect(second.code).toBe(3);
    expect(second.stderr).toContain(held);
    expect(second.stderr).not.toContain(settled);
    expect(second.stderr).not.toContain(blocked);

    const third = await poll('1h');
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toBe('');

    await sdk.cancel(held, { cancellationReason: 'Ordered twice' });
    await sdk.waitForFinalStatus(held, { timeoutMs: 60_000 });
    const fourth = await poll('1s');
    expect(fourth.code, fourth.stderr).toBe(0);
    const fifth = await poll('1s');
    expect(fifth.stdout).toBe('');

    const all = [first, second, third, fourth, fifth].flatMap((run) => lines(run.stdout));
    const final = expectOneChainEach(all);
    expect(Object.fromEntries(final)).toEqual({
      [settled]: 'AcceptedSettlementCompleted',
      [blocked]: 'Rejected',
      [held]: 'Cancelled',
    });
    expect(new Set(all.map((change) => change.changeId)).size).toBe(all.length);
    expect(
      all.find((change) => change.paymentId === blocked && change.status === 'Rejected')?.statusReason,
    ).toBe('BlockedAccount');
  });

  it('a run killed with SIGKILL loses nothing: the next run takes over its lock and reports what it missed', async () => {
    const { client, sdk, initiate } = await newTenantClient();
    let stallStatus = false;
    let statusSeen: () => void = () => undefined;
    const proxy = await startHttpProxy(service.baseUrl, {
      stall: (request) => {
        if (!stallStatus || !request.path.endsWith('/status')) return false;
        statusSeen();
        return true;
      },
    });
    try {
      // API calls through the proxy, tokens straight from the service (CREDIT_TRANSFERS_TOKEN_URL).
      const env = {
        ...cliEnv(proxy.url, client),
        CREDIT_TRANSFERS_TOKEN_URL: `${service.baseUrl}/oauth/token`,
      };
      const state = join(folder, `${client.clientId}.json`);
      const args = ['poll', '--state', state, '--stuck-after', '1h', '--format', 'json'];
      const held = [await initiate('acc-a-hold'), await initiate('acc-b-hold'), await initiate('acc-c-hold')];

      const first = await runCli(args, env);
      expect(first.code, first.stderr).toBe(0);
      expect(lines(first.stdout)).toHaveLength(3);
      const stateAfterFirst = await readFile(state, 'utf8');

      for (const paymentId of held) await sdk.cancel(paymentId);
      for (const paymentId of held) await sdk.waitForFinalStatus(paymentId, { timeoutMs: 60_000 });

      // The second run is killed while it waits for its first status answer.
      stallStatus = true;
      const seen = new Promise<void>((resolve) => {
        statusSeen = resolve;
      });
      const killed = startCli(args, env);
      await seen;
      killed.child.kill('SIGKILL');
      const second = await killed.done;
      stallStatus = false;
      expect(second.signal).toBe('SIGKILL');
      await access(`${state}.lock`); // left behind by the killed run
      expect(await readFile(state, 'utf8')).toBe(stateAfterFirst);

      const third = await runCli(args, env);
      expect(third.code, third.stderr).toBe(0);
      const fourth = await runCli(args, env);
      expect(fourth.stdout).toBe('');

      const all = [first, second, third].flatMap((run) => lines(run.stdout));
      const final = expectOneChainEach(all);
      expect([...final.values()]).toEqual(['Cancelled', 'Cancelled', 'Cancelled']);
      await expect(access(`${state}.lock`)).rejects.toThrow();
    } finally {
      await proxy.close();
    }
  });

  it('refuses to run while a live run holds the lock, and leaves the state alone', async () => {
    const { client } = await newTenantClient();
    const state = join(folder, `${client.clientId}.json`);
    // Held by this live process, which keeps it fresh all along.
    const lock = await acquireLock(state);
    try {
      const result = await runCli(['poll', '--state', state], cliEnv(service.baseUrl, client));
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(`${state}.lock`);
      expect(result.stderr).toContain('is alive');
      await expect(access(state)).rejects.toThrow();
    } finally {
      await lock.release();
    }
  });

  it('takes over the lock of a run that is a zombie (dead, not yet reaped by its parent)', async () => {
    const { client, initiate } = await newTenantClient();
    const env = cliEnv(service.baseUrl, client);
    const state = join(folder, `${client.clientId}.json`);
    await initiate('acc-z-hold');
    // The shell starts the run in the background, prints its pid, and becomes `sleep`, which never
    // reaps it: once killed, the run stays a zombie until the sleep ends.
    const holder = spawn(
      'sh',
      [
        '-c',
        `${cliCommand(['poll', '--state', state, '--format', 'json'], { preload: [STALL] })} & echo "pid $!" >&2; exec sleep 120`,
      ],
      {
        cwd: ROOT,
        env: { ...withoutCliSettings(process.env), ...env, STALL_AFTER_CHANGES: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let stderr = '';
      const pid = await new Promise<number>((resolve) => {
        holder.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const match = /pid (\d+)/.exec(stderr);
          if (match && stderr.includes('STALLED')) resolve(Number(match[1]));
        });
      });
      await access(`${state}.lock`);
      process.kill(pid, 'SIGKILL');
      // A zombie: its pid still exists (signal 0 finds it), it just never runs again.
      for (let attempt = 0; attempt < 100; attempt++) {
        const status = await readFile(`/proc/${pid}/stat`, 'utf8');
        if (status.split(') ')[1]?.startsWith('Z')) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.[0]).toBe('Z');
      expect(() => process.kill(pid, 0)).not.toThrow();

      const next = await runCli(['poll', '--state', state, '--format', 'json'], env);
      expect(next.code, next.stderr).toBe(0);
      expect(lines(next.stdout)).toHaveLength(1);
      await expect(access(`${state}.lock`)).rejects.toThrow();
    } finally {
      holder.kill('SIGKILL');
    }
  });

  /** Three held transfers, recorded by a first run, then cancelled: the next run has three changes to report. */
  const threeChangesPending = async () => {
    const { client, sdk, initiate } = await newTenantClient();
    const env = cliEnv(service.baseUrl, client);
    const state = join(folder, `${client.clientId}.json`);
    const args = ['poll', '--state', state, '--format', 'json'];
    const held = [await initiate('acc-a-hold'), await initiate('acc-b-hold'), await initiate('acc-c-hold')];
    const first = await runCli(args, env);
    expect(first.code, first.stderr).toBe(0);
    for (const paymentId of held) await sdk.cancel(paymentId);
    for (const paymentId of held) await sdk.waitForFinalStatus(paymentId, { timeoutMs: 60_000 });
    return { env, state, args, first };
  };

  /** Runs the CLI frozen by stall.ts at the moment `stallEnv` names, and kills it there. */
  const killWhenStalled = async (
    args: string[],
    env: Record<string, string>,
    stallEnv: Record<string, string>,
  ) => {
    const run = startCli(args, { ...env, ...stallEnv }, { preload: [STALL] });
    for (let waited = 0; !run.stderr().includes('STALLED'); waited += 20) {
      if (waited > 60_000) throw new Error(`never stalled: ${run.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    run.child.kill('SIGKILL');
    const result = await run.done;
    expect(result.signal).toBe('SIGKILL');
    return result;
  };

  it('a run killed in the middle of writing its state leaves the previous state whole', async () => {
    const { env, state, args, first } = await threeChangesPending();
    const before = await readFile(state, 'utf8');
    const killed = await killWhenStalled(args, env, { STALL_IN_STATE_WRITE: basename(state) });
    expect(lines(killed.stdout)).toHaveLength(3);
    // Half of the new state was on its way to disk when the run died: none of it is in the state file.
    expect(await readFile(state, 'utf8')).toBe(before);

    const next = await runCli(args, env);
    expect(next.code, next.stderr).toBe(0);
    expect(lines(next.stdout)).toEqual(lines(killed.stdout));
    expectOneChainEach([...lines(first.stdout), ...lines(next.stdout)]);
  });

  it('a run killed between printing a change and recording it: the next run repeats it with the same changeId', async () => {
    const { env, args } = await threeChangesPending();
    const killed = await killWhenStalled(args, env, { STALL_AFTER_CHANGES: '2' });
    const printed = lines(killed.stdout);
    expect(printed).toHaveLength(2);

    const next = await runCli(args, env);
    expect(next.code, next.stderr).toBe(0);
    const repeated = lines(next.stdout);
    expect(repeated).toHaveLength(3);
    for (const change of printed) expect(repeated).toContainEqual(change);
  });

  it('refuses a damaged state file and an unreadable duration in one line', async () => {
    const { client } = await newTenantClient();
    const env = cliEnv(service.baseUrl, client);
    const state = join(folder, `${client.clientId}.json`);
    await writeFile(state, '{"version":1,"transf');
    const damaged = await runCli(['poll', '--state', state, '--stuck-after', '15m'], env);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toMatch(/^Error: The state file .* is not valid JSON/);
    const badDuration = await runCli(['poll', '--state', state, '--stuck-after', 'soon'], env);
    expect(badDuration.code).toBe(1);
    expect(badDuration.stderr).toContain('90s, 15m or 2h');
  });
});
