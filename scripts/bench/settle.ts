import { spawn } from 'node:child_process';
import { open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startLocalService } from '#local/service-process';
import type { TrafficOptions, TrafficResult } from './load-traffic.ts';
import { serviceProcesses } from './processes.ts';
import { benchClient, benchCount, fixed, requestToken } from './support.ts';
import {
  benchHappyPathTableCalls,
  cpuOf,
  formatHappyPath,
  formatTableFigures,
  perTransfer,
  readTableFigures,
  type TableFigures,
  tableCallCounting,
} from './table-figures.ts';

/**
 * `npx tsx scripts/bench/settle.ts`: how fast the local runtime settles a backlog, and what each settled
 * transfer costs in CPU. The load of bench:load for `--seconds` (32 in flight) leaves a backlog;
 * the figures are taken under that load and then while the quiet runtime settles the rest:
 * settled per second and CPU milliseconds per settled transfer, per process. Not a test.
 *
 *   npx tsx scripts/bench/settle.ts --seconds 20
 *   npx tsx scripts/bench/settle.ts --seconds 20 --profile DIR   also writes .cpuprofile files into DIR
 *   npx tsx scripts/bench/settle.ts --count-calls                 also counts table calls and capacity units
 *
 * With --count-calls it first settles `--happy` ordinary transfers (50) on the quiet service and
 * reports what each cost from initiation to its last status event: table calls, read and write
 * units (table-call-counter.mjs), CPU per process; then the backlog's figures include them too.
 */
const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '32' },
    'settle-seconds': { type: 'string', default: '600' },
    profile: { type: 'string' },
    'count-calls': { type: 'boolean', default: false },
    happy: { type: 'string', default: '50' },
  },
});
const SECONDS = benchCount('--seconds', flags.seconds, 20);
const SETTLE_SECONDS = benchCount('--settle-seconds', flags['settle-seconds'], 600);
const TRAFFIC_SCRIPT = fileURLToPath(new URL('./load-traffic.ts', import.meta.url));
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);
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

const counting = flags['count-calls'] ? await tableCallCounting() : undefined;
const nodeOptions = [
  process.env.NODE_OPTIONS ?? '',
  flags.profile ? `--cpu-prof --cpu-prof-dir=${flags.profile}` : '',
  counting?.env.NODE_OPTIONS ?? '',
].join(' ');
const service = await startLocalService({
  env: { ...counting?.env, NODE_OPTIONS: nodeOptions.trim() },
});

const noFigures: TableFigures = { calls: {}, readUnits: {}, writeUnits: {}, conditionFailures: 0 };
/** Table figures of the service so far. */
const tableFigures = async (): Promise<TableFigures> =>
  counting ? readTableFigures(processes, counting.directory) : noFigures;
const processes = await serviceProcesses(service.pid);
const eventsFile = join(service.dataDir, 'events.jsonl');
const finals = new Set<string>();
let offset = 0;
try {
  const resultFile = join(tmpdir(), `bench-settle-${process.pid}.json`);
  const token = await requestToken(service.baseUrl);
  if (counting) {
    const happy = await benchHappyPathTableCalls(
      service,
      benchClient(service.baseUrl, token),
      counting.directory,
      benchCount('--happy', flags.happy, 50),
    );
    for (const line of formatHappyPath(happy)) console.log(line.replace(/^\n/, ''));
  }
  const options: TrafficOptions = {
    baseUrl: service.baseUrl,
    token,
    seconds: SECONDS,
    concurrency: benchCount('--concurrency', flags.concurrency, 32),
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
  const quietCalls = await tableFigures();
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
  const endCalls = await tableFigures();
  const settledQuiet = accepted.length - settledUnderLoad - open;
  const cpuPerTransfer = (from: Record<string, number>, to: Record<string, number>, settled: number) =>
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
    `quiet: ${settledQuiet} settled in ${fixed(quietSeconds)} s (${fixed(settledQuiet / quietSeconds)}/s), ${open} left; CPU ${busy(quietCpu, endCpu, quietSeconds)}; CPU per settled transfer: ${cpuPerTransfer(quietCpu, endCpu, settledQuiet)}`,
  );
  if (counting) {
    console.log(
      'Table figures per settled transfer of the backlog (quiet; its initiations ran under load, so no PutItem):',
    );
    for (const line of formatTableFigures(perTransfer(quietCalls, endCalls, settledQuiet)))
      console.log(`  ${line}`);
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
  await counting?.remove();
  await rm(service.dataDir, { recursive: true, force: true });
}
