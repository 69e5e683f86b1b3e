import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type LocalService, startLocalService } from '#local/service-process';
import { STARTING_DETAIL } from '#local/starting';

/**
 * `npx tsx scripts/bench/kill-restart.ts [--cycles 50] [--seconds 1200] [--concurrency 8]
 * [--backlog-seconds 0]`: mixed traffic (initiations, status reads, list pages with their cursors
 * and with an account filter, cancellations) against the local service on 127.0.0.1, which is
 * killed with SIGKILL and started again on the same data folder, cycle after cycle: the first kill
 * after `--backlog-seconds` of traffic (a table of thousands of unfinished transfers, as in the
 * SIGKILL run of `npm run bench:load`), the others 1-3 s in. Every 5xx is reported with the request
 * and what the service logged; only the 503 of a starting service is counted apart (a 503 of a
 * call that could not finish in time is a failure here). Exit code 1 on any other 5xx.
 */

const { values } = parseArgs({
  options: {
    cycles: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '1200' },
    concurrency: { type: 'string', default: '8' },
    'backlog-seconds': { type: 'string', default: '0' },
  },
});
const CYCLES = Number(values.cycles);
const BUDGET_MS = Number(values.seconds) * 1000;
const CONCURRENCY = Number(values.concurrency);
const BACKLOG_MS = Number(values['backlog-seconds']) * 1000;
// 50 accounts as in bench:load, so an account filter matches about 2 % of the transfers.
const ACCOUNTS = Array.from({ length: 50 }, (_, index) => `kill-${index}`);
const TRANSFERS = '/v1/payments/credit-transfers';

interface Failure {
  cycle: number;
  request: string;
  status: number;
  body: string;
  log: string;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
const dataDir = await mkdtemp(join(tmpdir(), 'credit-transfers-kill-'));
const env = { PORT: String(port), SANDBOX_SETTLEMENT_SECONDS: '1' };

let service: LocalService | undefined;
let cycle = 0;
let running = true;
const counts = new Map<string, number>();
const failures: Failure[] = [];
const known: string[] = [];
let token = '';

const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(token && { Authorization: `Bearer ${token}` }),
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  const starting =
    response.status === 503 && response.headers.get('retry-after') !== null && text.includes(STARTING_DETAIL);
  count(starting ? '503 starting' : String(response.status));
  if (response.status >= 500 && !starting) {
    const log = service?.output() ?? '';
    failures.push({
      cycle,
      request: `${method} ${path}`,
      status: response.status,
      body: text,
      log: log.slice(-6000),
    });
  }
  return { status: response.status, text, headers: response.headers };
};

const renewToken = async () => {
  const reply = await call('POST', '/oauth/token', {
    grant_type: 'client_credentials',
    client_id: 'it-client',
    client_secret: 'it-client-secret-0123456789',
    scope: 'transactions:read transactions:write',
  });
  if (reply.status === 200) token = (JSON.parse(reply.text) as { access_token: string }).access_token;
};

/** One step of one client: a random operation, as a mixed workload would. */
const step = async (state: { cursor: string; filter: Record<string, string> }) => {
  if (!token) return renewToken();
  const choice = Math.random();
  let reply: Awaited<ReturnType<typeof call>>;
  if (choice < 0.4) {
    reply = await call(
      'POST',
      TRANSFERS,
      {
        paymentMethod: 'CreditTransfer',
        amount: `${1 + Math.floor(Math.random() * 500)}.00`,
        debtorAccountId: ACCOUNTS[Math.floor(Math.random() * ACCOUNTS.length)],
      },
      { idempotencyId: Math.random() < 0.2 ? `kill-${Math.floor(Math.random() * 50)}` : randomUUID() },
    );
    if (reply.status === 202) known.push((JSON.parse(reply.text) as { paymentId: string }).paymentId);
  } else if (choice < 0.6 && known.length > 0) {
    reply = await call('GET', `${TRANSFERS}/${known[Math.floor(Math.random() * known.length)]}/status`);
  } else if (choice < 0.9) {
    // Half the walks filtered by account, as bench:load asks: a filter reads more of the index.
    if (!state.cursor)
      state.filter =
        Math.random() < 0.5
          ? { 'debtorAccountId.eq': ACCOUNTS[Math.floor(Math.random() * ACCOUNTS.length)] as string }
          : {};
    const query = new URLSearchParams({
      limit: '20',
      ...state.filter,
      ...(state.cursor && { cursor: state.cursor }),
    });
    reply = await call('GET', `${TRANSFERS}?${query}`);
    state.cursor = reply.status === 200 ? (reply.headers.get('pagination-cursor') ?? '') : '';
  } else if (known.length > 0) {
    reply = await call(
      'POST',
      `${TRANSFERS}/${known[Math.floor(Math.random() * known.length)]}/cancellation`,
      {},
    );
  } else return;
  if (reply.status === 401) await renewToken();
};

const client = async () => {
  const state = { cursor: '', filter: {} };
  while (running) {
    try {
      await step(state);
    } catch {
      // No answer: the service is down (killed, or not listening yet).
      count('no answer');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
};

const waitHealthy = async () => {
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/health`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

const started = Date.now();
service = await startLocalService({ dataDir, env });
await waitHealthy();
const clients = Array.from({ length: CONCURRENCY }, () => client());
const restartMs: number[] = [];
try {
  for (cycle = 1; cycle <= CYCLES && Date.now() - started < BUDGET_MS; cycle++) {
    const traffic = cycle === 1 && BACKLOG_MS > 0 ? BACKLOG_MS : 1000 + Math.random() * 2000;
    await new Promise((resolve) => setTimeout(resolve, traffic));
    await service.kill();
    const killedAt = Date.now();
    service = await startLocalService({ dataDir, env });
    await waitHealthy();
    restartMs.push(Date.now() - killedAt);
    process.stdout.write(
      `cycle ${cycle}: up again after ${Date.now() - killedAt} ms; 5xx so far ${failures.length}\n`,
    );
  }
  // Traffic on the last start a little longer, then a clean stop.
  await new Promise((resolve) => setTimeout(resolve, 3000));
} finally {
  running = false;
  await Promise.all(clients);
  await service?.stop();
  await rm(dataDir, { recursive: true, force: true });
}

const cycles = cycle - 1;
const seconds = ((Date.now() - started) / 1000).toFixed(0);
console.log(`\n${cycles} SIGKILL-and-restart cycles in ${seconds} s, ${CONCURRENCY} clients on 127.0.0.1`);
console.log(
  `restart: median ${restartMs.sort((a, b) => a - b)[Math.floor(restartMs.length / 2)]} ms, longest ${restartMs.at(-1)} ms`,
);
console.log(
  `answers: ${[...counts]
    .sort()
    .map(([key, value]) => `${value} x ${key}`)
    .join(', ')}`,
);
console.log(`5xx other than the 503 of a starting service: ${failures.length}`);
for (const failure of failures) {
  console.log(
    `\n--- cycle ${failure.cycle}: ${failure.request} -> ${failure.status}\n${failure.body}\n--- service log (tail):\n${failure.log}`,
  );
}
process.exit(failures.length === 0 ? 0 : 1);
