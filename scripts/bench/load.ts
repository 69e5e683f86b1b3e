import { spawn } from 'node:child_process';
import { open, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import { type LocalService, startLocalService } from '#local/service-process';
import { benchInitiationThroughput } from './initiation.ts';
import { ROUTES, type TrafficOptions, type TrafficResult } from './load-traffic.ts';
import {
  type MachineSample,
  type ProcessSample,
  type ServiceProcess,
  sampleProcesses,
  serviceProcesses,
} from './processes.ts';
import { BenchReport, lineChart } from './report.ts';
import { benchClient, benchCount, fixed, requestToken } from './support.ts';

/**
 * `npm run bench:load`: sustained mixed traffic from a second process against the local runtime
 * (lifecycle on, as `npm start` runs it), the same load run several times on the same data, then
 * the same with the runtime killed (SIGKILL) midway and restarted. Prints figures per window and
 * PASS/FAIL per criterion, and writes its part of docs/benchmarks.md. Not a test.
 *
 *   npm run bench:load                       3 runs x 180 s, then the kill run
 *   npm run bench:load -- --short            3 runs x 20 s (a smoke run)
 *   npm run bench:load -- --runs 2 --seconds 60 --concurrency 32 --settle-seconds 300 --no-kill
 *   npm run bench:load -- --accounts 5000    transfers spread over 5000 accounts (default 50)
 */
const { values: flags } = parseArgs({
  options: {
    short: { type: 'boolean', default: false },
    runs: { type: 'string', default: process.env.BENCH_LOAD_RUNS },
    seconds: { type: 'string', default: process.env.BENCH_LOAD_SECONDS },
    concurrency: { type: 'string', default: process.env.BENCH_LOAD_CONCURRENCY ?? '32' },
    accounts: { type: 'string', default: process.env.BENCH_LOAD_ACCOUNTS ?? '50' },
    'settle-seconds': { type: 'string', default: process.env.BENCH_LOAD_SETTLE_SECONDS ?? '600' },
    'no-kill': { type: 'boolean', default: false },
    'no-report': { type: 'boolean', default: false },
  },
});
const RUNS = benchCount('--runs (BENCH_LOAD_RUNS)', flags.runs, 3);
const SECONDS = benchCount('--seconds (BENCH_LOAD_SECONDS)', flags.seconds, flags.short ? 20 : 180);
const CONCURRENCY = benchCount('--concurrency (BENCH_LOAD_CONCURRENCY)', flags.concurrency, 32);
const ACCOUNTS = benchCount('--accounts (BENCH_LOAD_ACCOUNTS)', flags.accounts, 50);
const SETTLE_SECONDS = benchCount(
  '--settle-seconds (BENCH_LOAD_SETTLE_SECONDS)',
  flags['settle-seconds'],
  600,
);
/** Figures per window: a minute, or a third of a short run. */
const WINDOW_SECONDS = Math.min(60, Math.max(5, Math.floor(SECONDS / 3)));
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);
const TRAFFIC_SCRIPT = fileURLToPath(new URL('./load-traffic.ts', import.meta.url));
const TABLE = 'credit-transfers';

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Runs the traffic generator as a process of its own; resolves with what it saw. */
const traffic = async (options: Omit<TrafficOptions, 'resultFile'>): Promise<TrafficResult> => {
  const resultFile = join(tmpdir(), `bench-load-${options.runLabel}-${process.pid}.json`);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', TRAFFIC_SCRIPT, JSON.stringify({ ...options, resultFile })],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`traffic generator exited ${code}`);
  const result = JSON.parse(await readFile(resultFile, 'utf8')) as TrafficResult;
  await rm(resultFile, { force: true });
  return result;
};

/** Final status events, read from the local event bus file as it grows. */
const finalEventsReader = (service: { dataDir: string }) => {
  const finals = new Map<string, number>();
  let offset = 0;
  let partial = '';
  return {
    finals,
    read: async () => {
      const file = await open(join(service.dataDir, 'events.jsonl'), 'r').catch(() => undefined);
      if (!file) return;
      try {
        for (;;) {
          const buffer = Buffer.alloc(1 << 20);
          const { bytesRead } = await file.read(buffer, 0, buffer.length, offset);
          if (bytesRead === 0) break;
          offset += bytesRead;
          const lines = (partial + buffer.subarray(0, bytesRead).toString()).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) {
            if (line === '') continue;
            const { detail } = JSON.parse(line) as {
              detail: { paymentId: string; status: string; date: string };
            };
            if (FINAL.has(detail.status) && !finals.has(detail.paymentId))
              finals.set(detail.paymentId, Date.parse(detail.date));
          }
        }
      } finally {
        await file.close();
      }
    },
  };
};

/** Waits until every accepted transfer has published a final status; the seconds it took, or undefined. */
const settle = async (events: ReturnType<typeof finalEventsReader>, accepted: readonly string[]) => {
  const began = Date.now();
  const deadline = began + SETTLE_SECONDS * 1000;
  for (;;) {
    await events.read();
    const open = accepted.filter((paymentId) => !events.finals.has(paymentId)).length;
    if (open === 0) return (Date.now() - began) / 1000;
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
};

/** Every accepted transfer read back through the API: retrievable (200) and final. */
const verifyAccepted = async (api: ReturnType<typeof benchClient>, accepted: readonly string[]) => {
  const unique = [...new Set(accepted)];
  let missing = 0;
  let notFinal = 0;
  let next = 0;
  const worker = async () => {
    while (next < unique.length) {
      const paymentId = unique[next++];
      const reply = await api.get(`/v1/payments/credit-transfers/${paymentId}/status`);
      if (reply.status !== 200) missing++;
      else if (!FINAL.has((JSON.parse(reply.text) as { status: string }).status)) notFinal++;
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return { checked: unique.length, missing, notFinal };
};

/** Transfers per idempotency key in the table itself (a full scan, after the load). */
const transfersPerKey = async (service: LocalService, label: string) => {
  const client = createDocumentClient(undefined, service.tableSocket);
  const perKey = new Map<string, number>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.scan({
      TableName: TABLE,
      ProjectionExpression: 'idempotencyKey, #type',
      FilterExpression: 'begins_with(idempotencyKey, :label) AND #type = :type',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':label': label, ':type': 'CreditTransfer' },
      ...(startKey && { ExclusiveStartKey: startKey }),
    });
    for (const item of page.Items ?? []) {
      const key = item.idempotencyKey as string;
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return perKey;
};

const percentile = (sorted: readonly number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;

interface WindowFigures {
  run: string;
  window: number;
  /** Seconds since the first run began, at the window's end. */
  at: number;
  perSecond: number;
  errors5xx: number;
  noAnswer: number;
  latency: Record<string, { p50: number; p99: number; count: number }>;
  rssMb: Record<string, number>;
  /** The anonymous part of each process's RSS, its peak in the window. */
  anonymousMb: Record<string, number>;
  /** CPU ms each process used in the window, per answered request. */
  cpuMsPerRequest: Record<string, number>;
  /** Share of the whole machine's CPU (all cores) busy in the window, in percent. */
  machineBusyPercent?: number;
  settledPerSecond: number;
}

/** How much a cumulative counter grew between the first and the last sample inside [start, end]. */
const growth = <S extends { at: number }>(
  samples: readonly S[],
  start: number,
  end: number,
  value: (sample: S) => number,
) => {
  const inside = samples.filter((sample) => sample.at >= start && sample.at <= end);
  const first = inside[0];
  const last = inside.at(-1);
  return first && last && last !== first
    ? { amount: value(last) - value(first), ms: last.at - first.at }
    : undefined;
};

const windowsOf = (
  run: string,
  result: TrafficResult,
  memory: readonly ProcessSample[],
  machine: readonly MachineSample[],
  finals: ReadonlyMap<string, number>,
  origin: number,
): WindowFigures[] => {
  const windows: WindowFigures[] = [];
  const length = WINDOW_SECONDS * 1000;
  for (let start = result.startedAt, index = 1; start < result.stoppedAt - 1000; start += length, index++) {
    const end = Math.min(start + length, result.stoppedAt);
    const rows = result.requests.filter(([at]) => at >= start && at < end);
    const latency: WindowFigures['latency'] = {};
    ROUTES.forEach((route, routeIndex) => {
      const times = rows
        .filter(([, r, status]) => r === routeIndex && status !== 0)
        .map(([, , , ms]) => ms)
        .sort((a, b) => a - b);
      latency[route] = { p50: percentile(times, 0.5), p99: percentile(times, 0.99), count: times.length };
    });
    const rssMb: Record<string, number> = {};
    const anonymousMb: Record<string, number> = {};
    for (const sample of memory.filter((entry) => entry.at >= start && entry.at <= end)) {
      // The window's peak: a leak shows in it as much as in the mean.
      rssMb[sample.role] = Math.max(rssMb[sample.role] ?? 0, sample.rssMb);
      anonymousMb[sample.role] = Math.max(anonymousMb[sample.role] ?? 0, sample.anonymousMb);
    }
    const answered = rows.filter(([, , status]) => status !== 0).length;
    const cpuMsPerRequest: Record<string, number> = {};
    for (const role of Object.keys(rssMb)) {
      const used = growth(
        memory.filter((sample) => sample.role === role),
        start,
        end,
        (sample) => sample.cpuMs,
      );
      // Scaled to the whole window: the samples inside it cover a little less.
      if (used && answered > 0) cpuMsPerRequest[role] = (used.amount * ((end - start) / used.ms)) / answered;
    }
    const busy = growth(machine, start, end, (sample) => sample.busyMs);
    const total = growth(machine, start, end, (sample) => sample.totalMs);
    const machineBusyPercent =
      busy && total && total.amount > 0 ? (100 * busy.amount) / total.amount : undefined;
    let settled = 0;
    for (const at of finals.values()) if (at >= start && at < end) settled++;
    windows.push({
      run,
      window: index,
      at: (end - origin) / 1000,
      perSecond: answered / ((end - start) / 1000),
      errors5xx: rows.filter(([, , status]) => status >= 500).length,
      noAnswer: rows.filter(([, , status]) => status === 0).length,
      latency,
      rssMb,
      anonymousMb,
      cpuMsPerRequest,
      ...(machineBusyPercent !== undefined && { machineBusyPercent }),
      settledPerSecond: settled / ((end - start) / 1000),
    });
  }
  return windows;
};

interface Verdict {
  criterion: string;
  pass: boolean;
  detail: string;
}

const verdictLines = (verdicts: readonly Verdict[]) =>
  verdicts.map((v) => `- **${v.pass ? 'PASS' : 'FAIL'}** ${v.criterion}: ${v.detail}`);

// ---------------------------------------------------------------------------------------------

const report = new BenchReport('bench:load', [
  '## Sustained load (`npm run bench:load`)',
  '',
  `Mixed traffic from a separate process, ${CONCURRENCY} requests in flight (closed loop: the highest rate the service sustains), ` +
    `${RUNS} runs of ${SECONDS} s on the same data, lifecycle on (as \`npm start\` runs it). Mix: initiation without key 30 %, ` +
    `with a new key 20 %, replay of a key 10 %, status 20 %, list (one of ${ACCOUNTS} accounts, limit 20) 10 %, cancellation 10 %. ` +
    `Figures per ${WINDOW_SECONDS} s window; memory is each process's peak RSS in the window, and the peak of its anonymous part (what it allocated, less the files mapped into it); CPU is each process's CPU time (all its threads) per answered request, and the share of the whole machine's CPU in use (the traffic generator's included).`,
]);

const service = await startLocalService();
const api = benchClient(service.baseUrl, await requestToken(service.baseUrl));
const processes: ServiceProcess[] = await serviceProcesses(service.pid);
const memory = sampleProcesses(() => processes, 2000);
const events = finalEventsReader(service);
const origin = Date.now();
const windows: WindowFigures[] = [];
const verdicts: Verdict[] = [];
const runs: {
  label: string;
  result: TrafficResult;
  settleSeconds?: number;
  verify: Awaited<ReturnType<typeof verifyAccepted>>;
}[] = [];
const label = `load${Date.now().toString(36)}`;

try {
  console.log(`processes: ${processes.map((p) => `${p.role} ${p.pid}`).join(', ')}`);
  for (let run = 1; run <= RUNS; run++) {
    console.log(`\nrun ${run} of ${RUNS}: ${SECONDS} s at concurrency ${CONCURRENCY}`);
    const result = await traffic({
      baseUrl: service.baseUrl,
      token: await requestToken(service.baseUrl),
      seconds: SECONDS,
      concurrency: CONCURRENCY,
      runLabel: `${label}-r${run}`,
      accounts: ACCOUNTS,
    });
    const settleSeconds = await settle(events, result.accepted);
    const verify = await verifyAccepted(api, result.accepted);
    runs.push({ label: `run ${run}`, result, ...(settleSeconds !== undefined && { settleSeconds }), verify });
    windows.push(...windowsOf(`run ${run}`, result, memory.samples, memory.machine, events.finals, origin));
    console.log(
      `run ${run}: ${result.requests.length} requests, ${result.accepted.length} accepted, settled in ${settleSeconds === undefined ? `>${SETTLE_SECONDS}` : fixed(settleSeconds)} s`,
    );
  }

  // Side by side on the same service and table, lifecycle on: the workflow must not starve initiation.
  const starvation = await benchInitiationThroughput(service, api, {
    requests: benchCount(
      'BENCH_LOAD_SIDE_BY_SIDE_REQUESTS',
      process.env.BENCH_LOAD_SIDE_BY_SIDE_REQUESTS,
      2000,
    ),
    concurrency: 16,
    rounds: 4,
  });
  const perKey = await transfersPerKey(service, label);
  await memory.stop();

  // Verdicts over the runs.
  const all5xx = windows.reduce((sum, w) => sum + w.errors5xx, 0);
  verdicts.push({ criterion: 'zero 5xx', pass: all5xx === 0, detail: `${all5xx} answers 5xx` });
  for (const run of runs) {
    verdicts.push({
      criterion: `${run.label}: every 202 retrievable and final within ${SETTLE_SECONDS} s after load`,
      pass: run.settleSeconds !== undefined && run.verify.missing === 0 && run.verify.notFinal === 0,
      detail: `${run.verify.checked} accepted; settled ${run.settleSeconds === undefined ? 'not in time' : `${fixed(run.settleSeconds)} s after load stopped`}; ${run.verify.missing} not found, ${run.verify.notFinal} not final`,
    });
  }
  const keys = runs.flatMap((run) => Object.keys(run.result.keys));
  const mismatches = runs.reduce((sum, run) => sum + run.result.replayMismatches, 0);
  const notOne = keys.filter((key) => perKey.get(key) !== 1).length;
  verdicts.push({
    criterion: 'one transfer per idempotency key',
    pass: notOne === 0 && mismatches === 0,
    detail: `${keys.length} keys, ${runs.reduce((sum, run) => sum + run.result.requests.filter(([, r, s]) => r === 2 && s !== 0).length, 0)} replays; ${notOne} keys without exactly one transfer in the table, ${mismatches} replays answered with another paymentId`,
  });
  // Judged on anonymous memory, what the process allocated: its RSS also counts the table
  // stand-in's LevelDB files mapped for reading, which grow with the data on disk (decisions).
  const secondAndLast = (series: number[]) => {
    const present = series.filter((mb) => mb > 0);
    return { second: present[1] ?? present[0] ?? 0, last: present.at(-1) ?? 0 };
  };
  for (const role of new Set(memory.samples.map((sample) => sample.role))) {
    const anonymous = secondAndLast(windows.map((w) => w.anonymousMb[role] ?? 0));
    const rss = secondAndLast(windows.map((w) => w.rssMb[role] ?? 0));
    verdicts.push({
      criterion: `memory flat, ${role} (anonymous memory: last window <= 1.5 x the second)`,
      pass: anonymous.last <= 1.5 * anonymous.second,
      detail:
        `${fixed(anonymous.second)} MB -> ${fixed(anonymous.last)} MB (x${fixed(anonymous.last / anonymous.second, 2)}); ` +
        `whole RSS ${fixed(rss.second)} MB -> ${fixed(rss.last)} MB (x${fixed(rss.last / rss.second, 2)})`,
    });
  }
  const throughputOf = (run: (typeof runs)[number]) =>
    run.result.requests.filter(([, , status]) => status !== 0).length /
    ((run.result.stoppedAt - run.result.startedAt) / 1000);
  const first = runs[0];
  const lastRun = runs.at(-1);
  if (first && lastRun && runs.length > 1) {
    const ratio = throughputOf(lastRun) / throughputOf(first);
    verdicts.push({
      criterion: `${lastRun.label} throughput >= 0.9 x run 1`,
      pass: ratio >= 0.9,
      detail: `${runs.map((run) => `${run.label} ${fixed(throughputOf(run))}/s`).join(', ')} (x${fixed(ratio, 2)})`,
    });
  }
  verdicts.push({
    criterion: 'lifecycle on: HTTP initiations >= 0.5 x raw conditional PutItem, same table, side by side',
    pass: starvation.ratio >= 0.5,
    detail: `HTTP ${fixed(starvation.viaHttp.perSecond)}/s (p50 ${fixed(starvation.viaHttp.p50Ms)} ms, p99 ${fixed(starvation.viaHttp.p99Ms)} ms), raw ${fixed(starvation.raw.perSecond)}/s (p50 ${fixed(starvation.raw.p50Ms)} ms): x${fixed(starvation.ratio, 2)}`,
  });

  const roles = [...new Set(memory.samples.map((sample) => sample.role))];
  report.section({
    title: 'Per window: throughput, latency per route (p50 / p99 ms), memory',
    lines: [
      `Processes: ${processes.map((p) => p.role).join(', ')}` +
        (processes.some((p) => p.role === 'workflow') ? '.' : ' (the workflow runs in the server process).'),
    ],
    table: {
      columns: [
        'run',
        'window',
        'req/s',
        'settled/s',
        '5xx',
        ...ROUTES,
        ...roles.map((role) => `RSS ${role} MB`),
        ...roles.map((role) => `anonymous ${role} MB`),
        ...roles.map((role) => `CPU ${role} ms/req`),
        'machine CPU busy %',
      ],
      rows: windows.map((w) => [
        w.run,
        w.window,
        fixed(w.perSecond),
        fixed(w.settledPerSecond),
        w.errors5xx,
        ...ROUTES.map((route) => {
          const l = w.latency[route];
          return l && l.count > 0 ? `${fixed(l.p50, 0)} / ${fixed(l.p99, 0)}` : '-';
        }),
        ...roles.map((role) => fixed(w.rssMb[role] ?? 0, 0)),
        ...roles.map((role) => fixed(w.anonymousMb[role] ?? 0, 0)),
        ...roles.map((role) => {
          const ms = w.cpuMsPerRequest[role];
          return ms === undefined ? '-' : fixed(ms, 2);
        }),
        w.machineBusyPercent === undefined ? '-' : fixed(w.machineBusyPercent, 0),
      ]),
    },
    charts: [
      {
        name: 'load-throughput',
        title: 'Throughput over time',
        spec: lineChart({
          title: 'Requests and settled transfers per second',
          values: windows.flatMap((w) => [
            { at: w.at, rate: w.perSecond, series: 'requests/s' },
            { at: w.at, rate: w.settledPerSecond, series: 'settled transfers/s' },
          ]),
          x: { field: 'at', title: 'seconds since the first run began' },
          y: { field: 'rate', title: 'per second' },
          series: { field: 'series', title: '' },
        }),
      },
      {
        name: 'load-latency',
        title: 'p99 latency per route over time',
        spec: lineChart({
          title: 'p99 latency per route (ms)',
          values: windows.flatMap((w) =>
            ROUTES.map((route) => ({ at: w.at, ms: w.latency[route]?.p99 ?? 0, route })),
          ),
          x: { field: 'at', title: 'seconds since the first run began' },
          y: { field: 'ms', title: 'p99 ms' },
          series: { field: 'route', title: 'route' },
        }),
      },
      {
        name: 'load-memory',
        title: 'Memory (RSS) per process over time',
        spec: lineChart({
          title: 'RSS per process and its anonymous part (MB), sampled every 2 s',
          values: memory.samples.flatMap((sample) => [
            { at: (sample.at - origin) / 1000, mb: sample.rssMb, role: sample.role },
            { at: (sample.at - origin) / 1000, mb: sample.anonymousMb, role: `${sample.role}, anonymous` },
          ]),
          x: { field: 'at', title: 'seconds since the first run began' },
          y: { field: 'mb', title: 'RSS MB' },
          series: { field: 'role', title: 'process' },
        }),
      },
    ],
  });
  report.section({
    title: 'Initiation with the lifecycle on, against raw conditional writes (side by side)',
    lines: [
      `After the runs, on the same service and table (${starvation.viaHttp.requests} HTTP initiations and as many raw conditional ` +
        'PutItems of the same item, in alternating rounds, concurrency 16, while the workflow drives the initiated transfers):',
      '',
      `- HTTP initiations: ${fixed(starvation.viaHttp.perSecond)}/s (p50 ${fixed(starvation.viaHttp.p50Ms)} ms, p99 ${fixed(starvation.viaHttp.p99Ms)} ms)`,
      `- raw conditional PutItem: ${fixed(starvation.raw.perSecond)}/s (p50 ${fixed(starvation.raw.p50Ms)} ms, p99 ${fixed(starvation.raw.p99Ms)} ms)`,
      `- ratio: ${fixed(starvation.ratio, 2)} (target >= 0.5)`,
    ],
  });
} finally {
  await memory.stop();
  await service.stop();
  await rm(service.dataDir, { recursive: true, force: true });
}

// The kill variant: SIGKILL midway under load, restart on the same data and port, lose nothing.
if (!flags['no-kill']) {
  const port = await freePort();
  const env = { PORT: String(port) };
  let current = await startLocalService({ env });
  const dataDir = current.dataDir;
  const killLabel = `${label}-kill`;
  try {
    const token = await requestToken(current.baseUrl);
    const running = traffic({
      baseUrl: current.baseUrl,
      token,
      seconds: SECONDS,
      concurrency: CONCURRENCY,
      runLabel: killLabel,
      accounts: ACCOUNTS,
    });
    await new Promise((resolve) => setTimeout(resolve, (SECONDS * 1000) / 2));
    await current.kill();
    const killedAt = Date.now();
    current = await startLocalService({ dataDir, env });
    const restartSeconds = (Date.now() - killedAt) / 1000;
    const result = await running;
    const killEvents = finalEventsReader(current);
    const settleSeconds = await settle(killEvents, result.accepted);
    const verify = await verifyAccepted(benchClient(current.baseUrl, token), result.accepted);
    const perKey = await transfersPerKey(current, killLabel);
    const notOne = Object.keys(result.keys).filter((key) => perKey.get(key) !== 1).length;
    // While it starts, the runtime answers 503 with Retry-After by design: not a failure.
    const starting = result.startingAnswers;
    const fivexx = result.requests.filter(([, , status]) => status >= 500).length - starting;
    const killVerdicts: Verdict[] = [
      {
        criterion: 'SIGKILL midway: every 202 retrievable and final after restart',
        pass: settleSeconds !== undefined && verify.missing === 0 && verify.notFinal === 0,
        detail: `${verify.checked} accepted (before and after the kill); ${verify.missing} not found, ${verify.notFinal} not final; settled ${settleSeconds === undefined ? 'not in time' : `${fixed(settleSeconds)} s after load stopped`}; restart took ${fixed(restartSeconds)} s`,
      },
      {
        criterion: 'SIGKILL midway: one transfer per idempotency key',
        pass: notOne === 0 && result.replayMismatches === 0,
        detail: `${Object.keys(result.keys).length} keys; ${notOne} without exactly one transfer, ${result.replayMismatches} replays answered with another paymentId`,
      },
      {
        criterion: 'SIGKILL midway: zero 5xx but the 503 (Retry-After) of a runtime still starting',
        pass: fivexx === 0,
        detail: `${fivexx} other 5xx; ${starting} answered 503 while starting, ${result.requests.filter(([, , s]) => s === 0).length} unanswered while the service was down`,
      },
    ];
    verdicts.push(...killVerdicts);
  } finally {
    await current.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

report.section({ title: 'Pass criteria', lines: verdictLines(verdicts) });
if (!flags['no-report']) await report.write();
process.exitCode = verdicts.every((v) => v.pass) ? 0 : 1;
