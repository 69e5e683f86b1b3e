import { spawn } from 'node:child_process';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startLocalService } from '#local/service-process';
import type { TrafficOptions, TrafficResult } from './load-traffic.ts';
import { type ServiceProcess, serviceProcesses } from './processes.ts';
import { fixed, requestToken } from './support.ts';

/**
 * `npx tsx scripts/bench/settle.ts`: how fast the local runtime settles a backlog, and what each settled
 * transfer costs in CPU. The load of bench:load for `--seconds` (32 in flight) leaves a backlog;
 * the figures are taken under that load and then while the quiet runtime settles the rest:
 * settled per second and CPU milliseconds per settled transfer, per process. Not a test.
 *
 *   npx tsx scripts/bench/settle.ts --seconds 20
 *   npx tsx scripts/bench/settle.ts --seconds 20 --profile DIR   also writes .cpuprofile files into DIR
 *   npx tsx scripts/bench/settle.ts --count-calls                 also counts DynamoDB calls per settled transfer
 */
const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '32' },
    'settle-seconds': { type: 'string', default: '600' },
    profile: { type: 'string' },
    'count-calls': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(flags.seconds);
const SETTLE_SECONDS = Number(flags['settle-seconds']);
const TRAFFIC_SCRIPT = fileURLToPath(new URL('./load-traffic.ts', import.meta.url));
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);
/** Linux clock ticks per second (USER_HZ), the unit of /proc/<pid>/stat times. */
const TICKS_PER_SECOND = 100;

const cpuSeconds = async (pid: number): Promise<number> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name.
  return fields === undefined ? 0 : (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
};

const cpuOf = async (processes: readonly ServiceProcess[]) =>
  Object.fromEntries(
    await Promise.all(processes.map(async (p) => [p.role, await cpuSeconds(p.pid)] as const)),
  );

const finalsIn = async (eventsFile: string, finals: Set<string>, from: number): Promise<number> => {
  const file = await open(eventsFile, 'r').catch(() => undefined);
  if (!file) return from;
  let offset = from;
  try {
    const { size } = await file.stat();
    if (size <= offset) return offset;
    const buffer = Buffer.alloc(size - offset);
    await file.read(buffer, 0, buffer.length, offset);
    const text = buffer.toString();
    const end = text.lastIndexOf('\n') + 1;
    for (const line of text.slice(0, end).split('\n')) {
      if (line === '') continue;
      const { detail } = JSON.parse(line) as { detail: { paymentId: string; status: string } };
      if (FINAL.has(detail.status)) finals.add(detail.paymentId);
    }
    offset += Buffer.byteLength(text.slice(0, end));
  } finally {
    await file.close();
  }
  return offset;
};

const COUNTER = fileURLToPath(new URL('./table-call-counter.mjs', import.meta.url));
const countsDir = flags['count-calls'] ? await mkdtemp(join(tmpdir(), 'table-calls-')) : undefined;
const nodeOptions = [
  process.env.NODE_OPTIONS ?? '',
  flags.profile ? `--cpu-prof --cpu-prof-dir=${flags.profile}` : '',
  countsDir ? `--import ${COUNTER}` : '',
].join(' ');
const service = await startLocalService({
  env: { NODE_OPTIONS: nodeOptions.trim(), ...(countsDir && { TABLE_CALL_COUNTS_DIR: countsDir }) },
});

/** DynamoDB calls by operation, of every process of the service, so far. */
const tableCalls = async (): Promise<Record<string, number>> => {
  if (!countsDir) return {};
  const total: Record<string, number> = {};
  for (const { pid } of processes) {
    process.kill(pid, 'SIGUSR2');
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (const { pid } of processes) {
    const counts = JSON.parse(await readFile(join(countsDir, `${pid}.json`), 'utf8').catch(() => '{}'));
    for (const [operation, count] of Object.entries(counts as Record<string, number>))
      total[operation] = (total[operation] ?? 0) + count;
  }
  return total;
};
const processes = await serviceProcesses(service.pid);
const eventsFile = join(service.dataDir, 'events.jsonl');
const finals = new Set<string>();
let offset = 0;
try {
  const resultFile = join(tmpdir(), `bench-settle-${process.pid}.json`);
  const options: TrafficOptions = {
    baseUrl: service.baseUrl,
    token: await requestToken(service.baseUrl),
    seconds: SECONDS,
    concurrency: Number(flags.concurrency),
    resultFile,
    runLabel: `settle${Date.now().toString(36)}`,
  };
  const loadCpu = await cpuOf(processes);
  const child = spawn(process.execPath, ['--import', 'tsx', TRAFFIC_SCRIPT, JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if ((await new Promise<number | null>((resolve) => child.once('exit', resolve))) !== 0)
    throw new Error('traffic generator failed');
  const result = JSON.parse(await readFile(resultFile, 'utf8')) as TrafficResult;
  await rm(resultFile, { force: true });
  const accepted = [...new Set(result.accepted)];
  offset = await finalsIn(eventsFile, finals, offset);
  const settledUnderLoad = accepted.filter((id) => finals.has(id)).length;
  const quietCpu = await cpuOf(processes);
  const quietCalls = await tableCalls();
  const loadSeconds = (result.stoppedAt - result.startedAt) / 1000;
  const quietStarted = Date.now();
  let open = accepted.length - settledUnderLoad;
  while (open > 0 && Date.now() - quietStarted < SETTLE_SECONDS * 1000) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    offset = await finalsIn(eventsFile, finals, offset);
    open = accepted.filter((id) => !finals.has(id)).length;
  }
  const quietSeconds = (Date.now() - quietStarted) / 1000;
  const endCpu = await cpuOf(processes);
  const endCalls = await tableCalls();
  const settledQuiet = accepted.length - settledUnderLoad - open;
  const perTransfer = (from: Record<string, number>, to: Record<string, number>, settled: number) =>
    processes
      .map(
        (p) =>
          `${p.role} ${fixed((((to[p.role] ?? 0) - (from[p.role] ?? 0)) * 1000) / Math.max(1, settled))} ms`,
      )
      .join(', ');
  const busy = (from: Record<string, number>, to: Record<string, number>, seconds: number) =>
    processes
      .map((p) => `${p.role} ${fixed((((to[p.role] ?? 0) - (from[p.role] ?? 0)) / seconds) * 100, 0)} %`)
      .join(', ');
  console.log(`processes: ${processes.map((p) => `${p.role} ${p.pid}`).join(', ')}`);
  console.log(
    `under load: ${fixed(loadSeconds)} s, ${result.requests.length} requests (${fixed(result.requests.length / loadSeconds)}/s), ${accepted.length} accepted, ${settledUnderLoad} settled (${fixed(settledUnderLoad / loadSeconds)}/s); CPU ${busy(loadCpu, quietCpu, loadSeconds)}`,
  );
  console.log(
    `quiet: ${settledQuiet} settled in ${fixed(quietSeconds)} s (${fixed(settledQuiet / quietSeconds)}/s), ${open} left; CPU ${busy(quietCpu, endCpu, quietSeconds)}; CPU per settled transfer: ${perTransfer(quietCpu, endCpu, settledQuiet)}`,
  );
  if (countsDir) {
    const calls = Object.entries(endCalls).map(
      ([op, n]) => [op, (n - (quietCalls[op] ?? 0)) / Math.max(1, settledQuiet)] as const,
    );
    const total = calls.reduce((sum, [, n]) => sum + n, 0);
    console.log(
      `DynamoDB calls per settled transfer (quiet): ${fixed(total, 2)} (${calls.map(([op, n]) => `${op} ${fixed(n, 2)}`).join(', ')})`,
    );
  }
  const executions = (await readFile(join(service.dataDir, 'executions.jsonl'), 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { transitions: number; retries: number; status: string });
  const transitions = executions.reduce((sum, e) => sum + e.transitions, 0);
  console.log(
    `executions: ${executions.length} (${executions.filter((e) => e.status !== 'SUCCEEDED').length} not succeeded), ${fixed(transitions / Math.max(1, executions.length), 2)} state transitions each, ${executions.reduce((sum, e) => sum + e.retries, 0)} retries`,
  );
} finally {
  await service.stop();
  if (countsDir) await rm(countsDir, { recursive: true, force: true });
  await rm(service.dataDir, { recursive: true, force: true });
}
