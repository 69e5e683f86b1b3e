import { spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_MEMORY_MB, memoryOf } from '../../lib/function-memory.ts';
import { readPrices } from './bill.ts';
import {
  bundle,
  CONTEXT,
  freshBenchFolder,
  measuredFunctions,
  median,
  NOT_MEASURED,
  OUT_DIR,
  startBenchEnvironment,
} from './bundles.ts';
import { LAMBDA_INVOKE } from './lambda-invoke.ts';
import { benchCount, fixed } from './support.ts';

/**
 * Each function's duration at several Lambda memory sizes, to choose its memory from. On Lambda a
 * function's CPU share grows with its memory (1,769 MB is one vCPU); locally nothing limits
 * memory, so each size is stood in for by its CPU share: the bundled handler runs in a child
 * process whose CPU time (all its threads) is capped by a CFS quota of the kernel's cpu cgroup
 * controller at `size / 1769` of one CPU. Each process is cold (Node's start, the import and the
 * first invocation, under the quota) and then warm (invocations one after another, each with a
 * fresh event), against the same stand-ins as the cold-start bench (scripts/bench/bundles.ts).
 */

const MB_PER_VCPU = 1769;
/** From 128 MB to two vCPUs: above 1,769 MB only work on more than one thread gains (see NOTES). */
export const DEFAULT_SIZES: readonly number[] = [128, 256, 512, 1024, 1769, 3538];
/**
 * The quota's period. A short one spreads the share evenly: with 100 ms a process at 7 % may run
 * 7 ms flat out before it is stopped, so a short warm invocation would not feel its share at all.
 * The kernel's smallest quota is 1 ms, so 20 ms is the shortest that 128 MB (7.2 %) allows.
 */
const PERIOD_US = 20_000;
/** A size is allowed only if the process's peak resident memory stays below this share of it. */
const MEMORY_HEADROOM = 0.8;
/**
 * The weight of the measured process against everything else on the machine (1024 is a plain
 * process's): on a shared machine it is then delayed less by other work than by its own quota, as
 * on Lambda, where its share is its own; the quota still caps it.
 */
const CPU_WEIGHT_V1 = 8192;
const CPU_WEIGHT_V2 = 800;
/**
 * The bound on warm duration: a size is fast enough if its warm p50 is within 25 % of the fastest
 * size's, or within 10 ms of it, whichever is more. 10 ms is below what a client notices beside
 * API Gateway and the network, and below this machine's noise for a function that mostly waits on
 * the table; 25 % keeps a function that computes (a signature, a key derivation) from being slowed
 * by more than a quarter to save money.
 */
const BOUND_RATIO = 1.25;
const BOUND_MS = 10;
/**
 * And a cold start at most a second longer than the fastest size's: the first request after a
 * quiet spell (a client's, or a transfer's next step) waits for it, and Lambda bills the init as
 * well, so a size that is cheap warm but several seconds cold is not cheap for a payment API.
 */
const COLD_BOUND_MS = 1000;
const COST_TIE = 0.05;

/** Where the kernel lets this process cap a child's CPU: a cgroup v1 `cpu` hierarchy or a v2 one. */
interface CpuCgroups {
  readonly kind: 'cgroup v1 cpu.cfs_quota_us' | 'cgroup v2 cpu.max';
  /** A group capped at `share` of one CPU; its `cgroup.procs` file takes a process. */
  readonly group: (name: string, share: number) => string;
  readonly remove: () => void;
}

const writable = (path: string): boolean => {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

const cpuCgroups = (): CpuCgroups => {
  const made: string[] = [];
  const remove = () => {
    for (const dir of made.reverse()) rmdirSync(dir);
  };
  const v1 = '/sys/fs/cgroup/cpu';
  if (existsSync(join(v1, 'cpu.cfs_quota_us')) && writable(v1)) {
    const root = join(v1, `credit-transfers-bench-${process.pid}`);
    mkdirSync(root);
    made.push(root);
    writeFileSync(join(root, 'cpu.shares'), String(CPU_WEIGHT_V1));
    return {
      kind: 'cgroup v1 cpu.cfs_quota_us',
      group: (name, share) => {
        const dir = join(root, name);
        mkdirSync(dir);
        made.push(dir);
        writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round(PERIOD_US * share)));
        return dir;
      },
      remove,
    };
  }
  // cgroup v2: a group beside this process's own, where it was delegated the cpu controller.
  const own = /^0::(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  const parent = own === undefined ? undefined : join('/sys/fs/cgroup', own, '..');
  if (
    parent !== undefined &&
    existsSync(join(parent, 'cgroup.subtree_control')) &&
    readFileSync(join(parent, 'cgroup.subtree_control'), 'utf8').includes('cpu') &&
    writable(parent)
  ) {
    const root = join(parent, `credit-transfers-bench-${process.pid}`);
    mkdirSync(root);
    made.push(root);
    writeFileSync(join(root, 'cgroup.subtree_control'), '+cpu');
    writeFileSync(join(root, 'cpu.weight'), String(CPU_WEIGHT_V2));
    return {
      kind: 'cgroup v2 cpu.max',
      group: (name, share) => {
        const dir = join(root, name);
        mkdirSync(dir);
        made.push(dir);
        writeFileSync(join(dir, 'cpu.max'), `${Math.round(PERIOD_US * share)} ${PERIOD_US}`);
        return dir;
      },
      remove,
    };
  }
  throw new Error(
    'scripts/bench/memory.ts: no cpu cgroup this user may write (cgroup v1 /sys/fs/cgroup/cpu, or a v2 group delegated the cpu controller, as `systemd-run --user -p Delegate=yes` gives): it cannot give a process the CPU share of a memory size',
  );
};

/** In the child: the import, then each event in turn; each invocation's time and CPU, peak memory. */
const PROBE = `${LAMBDA_INVOKE}
import { readFileSync } from 'node:fs';
const { handler } = await import(process.env.BENCH_BUNDLE);
const events = JSON.parse(readFileSync(process.env.BENCH_EVENTS, 'utf8'));
const invocations = [];
let firstAnsweredAt = 0;
for (const [index, event] of events.entries()) {
  const context = { ...${JSON.stringify(CONTEXT)}, memoryLimitInMB: process.env.BENCH_MEMORY_MB, awsRequestId: 'bench-' + index, getRemainingTimeInMillis: () => 10000 };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let outcome;
  try {
    const result = await invokeAsLambda(handler, event, context);
    outcome = String(result?.statusCode ?? result?.policyDocument?.Statement?.[0]?.Effect ?? result?.status ?? 'ok');
  } catch (error) {
    outcome = \`\${error?.name}: \${error?.message}\`.slice(0, 60);
  }
  const ms = performance.now() - started;
  if (index === 0) firstAnsweredAt = performance.timeOrigin + performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  invocations.push({ ms, cpuMs: (cpu.user + cpu.system) / 1000, outcome });
}
process.stdout.write(JSON.stringify({ firstAnsweredAt, invocations, peakMb: process.resourceUsage().maxRSS / 1024 }));
`;

interface ProcessFigures {
  /** From the spawn to the first invocation's answer: Node's start, the import and the invocation. */
  coldMs: number;
  warm: { ms: number; cpuMs: number; outcome: string }[];
  firstOutcome: string;
  peakMb: number;
}

/** Runs the bundle in a fresh process inside `cgroup`, invoking it once per event. */
const runCapped = (
  file: string,
  events: unknown[],
  env: Record<string, string>,
  cgroup: string,
  sizeMb: number,
): Promise<ProcessFigures> =>
  new Promise((resolve, reject) => {
    const eventsFile = join(OUT_DIR, 'memory-events.json');
    writeFileSync(eventsFile, JSON.stringify(events));
    const spawnedAt = performance.timeOrigin + performance.now();
    // The shell joins the group before it becomes Node, so Node's own start runs under the quota.
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        'echo $$ > "$BENCH_CGROUP/cgroup.procs" && exec "$@"',
        'sh',
        process.execPath,
        '--input-type=module',
        '-e',
        PROBE,
      ],
      {
        env: {
          ...process.env,
          ...env,
          BENCH_CGROUP: cgroup,
          BENCH_BUNDLE: file,
          BENCH_EVENTS: eventsFile,
          BENCH_MEMORY_MB: String(sizeMb),
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(sizeMb),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', () => {
      try {
        const figures = JSON.parse(out.slice(out.lastIndexOf('{"firstAnsweredAt"'))) as {
          firstAnsweredAt: number;
          invocations: { ms: number; cpuMs: number; outcome: string }[];
          peakMb: number;
        };
        const [first, ...warm] = figures.invocations;
        resolve({
          coldMs: figures.firstAnsweredAt - spawnedAt,
          warm,
          firstOutcome: first?.outcome ?? '',
          peakMb: figures.peakMb,
        });
      } catch {
        reject(new Error(`No figures from ${file}: ${out.slice(-500)}`));
      }
    });
  });

interface SizeFigures {
  mb: number;
  coldMs: number;
  warmP50Ms: number;
  warmCpuMs: number;
  peakMb: number;
  gbSeconds: number;
  usdPerMillion: number;
  outcomes: string;
}

/** The cheapest size within the bounds of the fastest, among those whose memory has headroom. */
export const chooseSize = (sizes: readonly SizeFigures[]): SizeFigures | undefined => {
  const roomy = sizes.filter((size) => size.peakMb <= size.mb * MEMORY_HEADROOM);
  const fastest = Math.min(...roomy.map((size) => size.warmP50Ms));
  const bound = Math.max(fastest * BOUND_RATIO, fastest + BOUND_MS);
  const coldBound = Math.min(...roomy.map((size) => size.coldMs)) + COLD_BOUND_MS;
  const fastEnough = roomy.filter((size) => size.warmP50Ms <= bound && size.coldMs <= coldBound);
  const cheapest = Math.min(...fastEnough.map((size) => size.usdPerMillion));
  // Costs within COST_TIE of each other are one cost here (a billed millisecond is more of a short
  // invocation): the smallest such size, so that noise does not move the choice between runs.
  return fastEnough
    .filter((size) => size.usdPerMillion <= cheapest * (1 + COST_TIE))
    .sort((a, b) => a.mb - b.mb)[0];
};

const NOTES = [
  `CPU share: a child process in a cpu cgroup capped at size / ${MB_PER_VCPU} of one CPU (CFS quota, period ${PERIOD_US / 1000} ms), Node's start included, weighted ahead of other work on the machine so that its quota, not the machine's load, is what slows it; its memory is not limited, so peak RSS is what Node took with room to spare, and a size is allowed only if that peak is at most ${MEMORY_HEADROOM * 100} % of it.`,
  `Limits: the CPU here is x86, Lambda's Graviton arm64 (the same share is not the same speed); the table is dynalite on this machine, answering over loopback in a millisecond or two where DynamoDB answers from another host in a few (waits weigh less here than there, so small sizes lose a little less on AWS); above ${MB_PER_VCPU} MB Lambda gives more than one vCPU, which only work on other threads uses (the token endpoint's two scrypt derivations run in libuv's pool), so 3,538 MB (two) is the largest measured, on a machine of two CPUs that others share: the 1,769 and 3,538 MB rows are the ones most moved by other work.`,
  `Chosen: the cheapest size (USD per million warm invocations) whose warm p50 is within ${BOUND_RATIO}x or ${BOUND_MS} ms of the fastest size's, whichever is more, and whose cold start is at most ${COLD_BOUND_MS} ms longer than the fastest cold start; of sizes within ${COST_TIE * 100} % of that cost, the smallest.`,
  'USD per million: warm p50 rounded up to the millisecond as Lambda bills it, at the arm64 GB-second price, plus the request price (docs/aws-prices.json). A cold start bills its init too: the cold column is what one costs in time.',
];

export const benchMemory = async (options: {
  processes: number;
  warm: number;
  sizes: readonly number[];
}): Promise<string[]> => {
  const outside = options.sizes.filter((mb) => !(mb >= 128 && mb <= 10_240));
  if (outside.length > 0) throw new Error(`Lambda memory is 128 to 10,240 MB, not ${outside.join(', ')}`);
  const { prices } = await readPrices();
  const cgroups = cpuCgroups();
  freshBenchFolder();
  const bench = await startBenchEnvironment().catch((error: unknown) => {
    cgroups.remove();
    throw error;
  });
  const lines: string[] = [
    `\n## Memory per function (${options.processes} processes per size, each cold then ${options.warm} warm invocations; CPU capped by ${cgroups.kind})`,
    ...NOTES,
    `${'function'.padEnd(32)} ${'MB'.padStart(5)}  ${'cold ms'.padStart(8)}  ${'warm p50 ms'.padStart(11)}  ${'cpu ms'.padStart(7)}  ${'peak MB'.padStart(7)}  ${'GB-s'.padStart(9)}  ${'USD/M'.padStart(6)}  answers`,
  ];
  const choices: string[] = [];
  const disagreements: string[] = [];
  try {
    const only = process.env.BENCH_MEMORY_ONLY?.split(',');
    const groups = new Map(
      options.sizes.map((mb) => [mb, cgroups.group(`mb-${mb}`, mb / MB_PER_VCPU)] as const),
    );
    for (const fn of measuredFunctions(only)) {
      if (fn.event === undefined) throw new Error(`scripts/bench/memory.ts: no event for ${fn.name}`);
      const makeEvent = fn.event;
      const built = await bundle(fn.name, fn.entry);
      const rows: SizeFigures[] = [];
      for (const mb of options.sizes) {
        const runs: ProcessFigures[] = [];
        for (let run = 0; run < options.processes; run++) {
          // A tenant of its own per process, so that no process reads what the others wrote.
          bench.useTenant(`memory-${fn.name}-${mb}-${run}`);
          const events: unknown[] = [];
          for (let i = 0; i <= options.warm; i++) events.push(await makeEvent());
          runs.push(
            await runCapped(built.file, events, { ...bench.env, ...fn.env }, groups.get(mb) ?? '', mb),
          );
        }
        bench.useTenant('bench');
        const warm = runs.flatMap((run) => run.warm);
        const warmP50Ms = median(warm.map((invocation) => invocation.ms));
        const gbSeconds = (Math.ceil(warmP50Ms) / 1000) * (mb / 1024);
        const outcomes = new Map<string, number>();
        for (const outcome of [...runs.map((run) => run.firstOutcome), ...warm.map((w) => w.outcome)])
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        rows.push({
          mb,
          coldMs: median(runs.map((run) => run.coldMs)),
          warmP50Ms,
          warmCpuMs: median(warm.map((invocation) => invocation.cpuMs)),
          peakMb: Math.max(...runs.map((run) => run.peakMb)),
          gbSeconds,
          usdPerMillion: 1_000_000 * (gbSeconds * prices.lambdaArmGbSecond.usd + prices.lambdaRequest.usd),
          outcomes: [...outcomes].map(([outcome, n]) => `${outcome} x${n}`).join(', '),
        });
      }
      const chosen = chooseSize(rows);
      const first = lines.length;
      for (const row of rows)
        lines.push(
          `${(row === rows[0] ? fn.name : '').padEnd(32)} ${String(row.mb).padStart(5)}  ${fixed(row.coldMs, 0).padStart(8)}  ${fixed(row.warmP50Ms, 1).padStart(11)}  ${fixed(row.warmCpuMs, 1).padStart(7)}  ${fixed(row.peakMb, 0).padStart(7)}  ${row.gbSeconds.toFixed(5).padStart(9)}  ${fixed(row.usdPerMillion, 2).padStart(6)}  ${row.outcomes}${row === chosen ? '  <- chosen' : ''}`,
        );
      // As it goes: a section of many minutes shows each function when it is done.
      process.stderr.write(`${lines.slice(first).join('\n')}\n`);
      const configured = memoryOf(fn.entry);
      const atConfigured = rows.find((row) => row.mb === configured);
      choices.push(
        `${fn.name.padEnd(32)} ${chosen === undefined ? 'none (no size with headroom)' : `${chosen.mb} MB, warm p50 ${fixed(chosen.warmP50Ms, 1)} ms, cold ${fixed(chosen.coldMs, 0)} ms, ${fixed(chosen.usdPerMillion, 2)} USD/M`}; configured ${configured} MB${atConfigured === undefined ? '' : ` (${fixed(atConfigured.usdPerMillion, 2)} USD/M)`}`,
      );
      if (chosen !== undefined && chosen.mb !== configured)
        disagreements.push(`${fn.name} (${fn.entry}): chosen ${chosen.mb} MB, configured ${configured} MB`);
    }
  } finally {
    await bench.close();
    cgroups.remove();
  }
  lines.push(
    'Chosen size of each function, and the size lib/function-memory.ts configures:',
    ...choices.map((line) => `  ${line}`),
    disagreements.length === 0
      ? 'lib/function-memory.ts agrees with every choice.'
      : `lib/function-memory.ts differs from the choice for: ${disagreements.join('; ')}`,
    'Not measured (each keeps the size lib/function-memory.ts gives it):',
    ...Object.entries(NOT_MEASURED).map(([name, why]) => `  ${name}: ${why}`),
    `Configured sizes: ${Object.entries(FUNCTION_MEMORY_MB)
      .map(([entry, mb]) => `${entry.replace(/^lambdas\//, '').replace(/\.ts$/, '')} ${mb}`)
      .join(', ')}`,
  );
  return lines;
};

// `npx tsx scripts/bench/memory.ts` runs this section alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const line of await benchMemory({
    processes: benchCount('BENCH_MEMORY_PROCESSES', process.env.BENCH_MEMORY_PROCESSES, 2),
    warm: benchCount('BENCH_MEMORY_WARM', process.env.BENCH_MEMORY_WARM, 15),
    sizes: process.env.BENCH_MEMORY_SIZES?.split(',').map(Number) ?? DEFAULT_SIZES,
  }))
    console.log(line);
}
