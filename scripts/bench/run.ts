import { rm } from 'node:fs/promises';
import { type LocalService, startLocalService } from '#local/service-process';
import { benchAuthorizer } from './authorizer.ts';
import { benchBatchLifecycles } from './batch.ts';
import { readPrices } from './bill.ts';
import { benchBill } from './bill-report.ts';
import { benchBundles } from './bundles.ts';
import { benchCliStart } from './cli-start.ts';
import { benchFirstWebhookFairness, benchRetryFairness, type Delays } from './delivery-fairness.ts';
import { benchDpopReplay } from './dpop-replay.ts';
import { benchFairness } from './fairness.ts';
import { benchHostileUploads, hostileUploadRows } from './hostile-uploads.ts';
import { benchIamCheck } from './iam-check.ts';
import { benchInitiationCapacity, benchInitiationThroughput } from './initiation.ts';
import { benchLifecycleThroughput, benchLifecycleTransitions, formatLifecycleReport } from './lifecycle.ts';
import { benchListCreditTransfers, formatListBenchReport } from './list.ts';
import { benchListAtScale, MAX_COUNTED_ENTRIES } from './list-scale.ts';
import { benchMemory, DEFAULT_SIZES } from './memory.ts';
import {
  benchControlsLife,
  benchControlsThroughput,
  CONTROLS_CONFIGURATIONS,
  LIFE_SERVICE_ENV,
  paymentControlsSections,
} from './payment-controls.ts';
import { BenchReport, barChart, lineChart } from './report.ts';
import { type BenchClient, benchClient, benchCount, fixed, requestToken } from './support.ts';
import { benchHappyPathTableCalls, formatHappyPath, tableCallCounting } from './table-figures.ts';
import { benchTokenFlood } from './token-flood.ts';
import { benchUploadMemory, formatUploadMemory } from './upload-memory.ts';
import { benchWebhookDelivery, type WebhookBenchFigures, webhookBenchRow } from './webhooks.ts';

/**
 * `npm run bench`: figures measured side by side in one run, on a fresh local service per
 * section. Not a test: it prints, writes its part of docs/benchmarks.md, and fails only if the
 * service does. A section is one `report.section(...)` call.
 */

/** A fresh service of its own for each section, so one section's data or load never weighs on another. */
const withService = async (
  env: Record<string, string>,
  section: (service: LocalService, api: BenchClient) => Promise<void>,
) => {
  // The local IAM check is local only (AWS makes its own): off here, its cost per call is a section of its own.
  const fresh = await startLocalService({ env: { LOCAL_IAM: 'off', ...env } });
  try {
    await section(fresh, benchClient(fresh.baseUrl, await requestToken(fresh.baseUrl)));
  } finally {
    await fresh.stop();
    await rm(fresh.dataDir, { recursive: true, force: true });
  }
};

const preformatted = (lines: string[]) => ['```', ...lines.map((line) => line.replace(/^\n/, '')), '```'];

const report = new BenchReport('bench', ['## Service figures (`npm run bench`)']);
/** Pagination-Total and status.eq at scale: a region of its own, so it can be run alone. */
const scaleReport = new BenchReport('bench-list-scale', ['## List at scale (`npm run bench`)']);
/** Webhook delivery: a region of its own, so it can be run alone. */
const webhookReport = new BenchReport('bench-webhooks', ['## Webhook delivery (`npm run bench`)']);

/**
 * BENCH_ONLY=list-scale (names: bill, initiation, list, lifecycle, batch, table-calls, authorizer,
 * upload-memory, hostile-uploads, iam-check, bundles, memory, cli, list-scale, webhooks, token-flood, fairness, delivery-fairness, dpop-replay, payment-controls; comma-separated), or the same names as arguments
 * (`npm run bench -- bill`), runs only those sections; a region is rewritten only when one of its
 * sections ran, and keeps the sections that did not run.
 */
const named = process.argv.slice(2).filter((name) => !name.startsWith('-'));
const only = named.length > 0 ? named : process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
const runs = (name: string) => only === undefined || only.includes(name);

// The AWS bill per million settled transfers and of an idle prod stage: a region of its own, and
// quick (a few fresh services, tens of transfers each), so it can be run alone: npm run bench -- bill.
if (runs('bill')) await benchBill();

// What payment controls add per transfer: four tenants alike but for their controls, side by side
// on one service for the initiation rate, then each on a service of its own with the workflow on for
// a transfer's whole life; all count table calls inside dynalite. A region of its own: npm run bench -- payment-controls.
if (runs('payment-controls')) {
  const settings = {
    transfers: benchCount('BENCH_CONTROLS_TRANSFERS', process.env.BENCH_CONTROLS_TRANSFERS, 3000),
    concurrency: benchCount('BENCH_CONCURRENCY', process.env.BENCH_CONCURRENCY, 16),
    // Many short rounds: a busy moment of the shared machine falls on every configuration alike.
    rounds: 8,
    lifeTransfers: benchCount('BENCH_CONTROLS_LIFE_TRANSFERS', process.env.BENCH_CONTROLS_LIFE_TRANSFERS, 40),
  };
  const counting = await tableCallCounting(process.env.NODE_OPTIONS);
  try {
    let throughput: Awaited<ReturnType<typeof benchControlsThroughput>> = [];
    await withService(
      { ...counting.env, LOCAL_LIFECYCLE: 'off', RECONCILE_INTERVAL_SECONDS: '3600' },
      async (service) => {
        throughput = await benchControlsThroughput(service, counting.directory, settings);
      },
    );
    const life: Awaited<ReturnType<typeof benchControlsLife>>[] = [];
    // A transfer's life costs the same from one account as from many.
    for (const configuration of CONTROLS_CONFIGURATIONS.filter((entry) => entry.accounts === undefined))
      for (const outcome of ['settled', 'cancelled'] as const)
        await withService(
          { ...counting.env, RECONCILE_INTERVAL_SECONDS: '3600', ...LIFE_SERVICE_ENV[outcome] },
          async (service) => {
            life.push(
              await benchControlsLife(service, counting.directory, configuration, {
                transfers: settings.lifeTransfers,
                outcome,
              }),
            );
          },
        );
    const controlsReport = new BenchReport('bench-payment-controls', [
      '## Payment controls (`npm run bench -- payment-controls`)',
    ]);
    for (const section of paymentControlsSections(throughput, life, await readPrices(), settings))
      controlsReport.section(section);
    await controlsReport.write();
  } finally {
    await counting.remove();
  }
}

// The API alone: on AWS the workflow runs in Step Functions, not beside the API's functions, so
// here it is off, and its own cost is measured in the lifecycle section.
if (runs('initiation'))
  await withService({ LOCAL_LIFECYCLE: 'off' }, async (service, api) => {
    const concurrency = benchCount('BENCH_CONCURRENCY', process.env.BENCH_CONCURRENCY, 16);
    const requests = benchCount('BENCH_REQUESTS', process.env.BENCH_REQUESTS, 3000);
    await benchInitiationThroughput(service, api, { requests: 200, concurrency, rounds: 1 }); // warm-up
    const throughput = await benchInitiationThroughput(service, api, { requests, concurrency, rounds: 4 });
    report.section({
      title: `Initiation throughput (${requests} requests, concurrency ${concurrency}, same dynalite, local workflow off)`,
      table: {
        columns: ['path', 'per second', 'p50 ms', 'p99 ms'],
        rows: [
          [
            'HTTP initiation (whole local stack)',
            fixed(throughput.viaHttp.perSecond),
            fixed(throughput.viaHttp.p50Ms),
            fixed(throughput.viaHttp.p99Ms),
          ],
          [
            'raw conditional PutItem',
            fixed(throughput.raw.perSecond),
            fixed(throughput.raw.p50Ms),
            fixed(throughput.raw.p99Ms),
          ],
        ],
      },
      notes: [
        `Ratio HTTP / raw: **${fixed(throughput.ratio, 2)}** (target >= 0.5). With the lifecycle on, see the load report below.`,
      ],
      charts: [
        {
          name: 'initiation-latency',
          title: 'Initiation latency, HTTP against raw conditional writes',
          spec: barChart({
            title: 'Initiation latency (ms)',
            values: [
              { path: 'HTTP initiation', percentile: 'p50', ms: throughput.viaHttp.p50Ms },
              { path: 'HTTP initiation', percentile: 'p99', ms: throughput.viaHttp.p99Ms },
              { path: 'raw PutItem', percentile: 'p50', ms: throughput.raw.p50Ms },
              { path: 'raw PutItem', percentile: 'p99', ms: throughput.raw.p99Ms },
            ],
            x: { field: 'path', title: '' },
            y: { field: 'ms', title: 'ms' },
            series: { field: 'percentile', title: '' },
          }),
        },
      ],
    });

    const capacity = await benchInitiationCapacity(service);
    report.section({
      title: 'Write capacity per initiation, table item (ReturnConsumedCapacity)',
      lines: [
        'Index entries (list and recovery indexes, under 1 KB each) add 1 WCU apiece: see the list section. ' +
          'dynalite reports nothing for a refused conditional write, which DynamoDB bills as one write of the item size.',
      ],
      table: {
        columns: ['request', 'item bytes', 'started KB', 'WCU written', 'RCU read'],
        rows: capacity.map((row) => [
          row.label,
          row.itemBytes,
          row.startedKilobytes,
          row.writeUnits,
          row.readUnits,
        ]),
      },
    });
  });

if (runs('initiation')) await report.write();

// The list figures compare tables of known sizes.
if (runs('list'))
  await withService({}, async (listService, api) => {
    const largeCount = benchCount('BENCH_LIST_STORED', process.env.BENCH_LIST_STORED, 100_000);
    const lines = formatListBenchReport(await benchListCreditTransfers(listService, api, { largeCount }));
    report.section({
      title: 'List: one page, Pagination-Total, index projections',
      lines: preformatted(lines),
    });
  });
if (runs('list')) await report.write();

// The lifecycle runs its workflows in the service process: nothing else in flight.
if (runs('lifecycle'))
  await withService({}, async (lifecycleService, api) => {
    const transitions = await benchLifecycleTransitions(lifecycleService, api);
    const throughput = await benchLifecycleThroughput(lifecycleService, api, {
      transfers: benchCount('BENCH_LIFECYCLE_TRANSFERS', process.env.BENCH_LIFECYCLE_TRANSFERS, 2000),
      concurrency: benchCount('BENCH_CONCURRENCY', process.env.BENCH_CONCURRENCY, 16),
    });
    report.section({
      title: 'Lifecycle: state transitions and settlement throughput',
      lines: preformatted(formatLifecycleReport(transitions, throughput)),
    });
  });

if (runs('lifecycle')) await report.write();

// A payroll-sized pain.001 with the workflow on: the 202 no longer waits for the workflows, which
// start after it (the StartBatchLifecycles function, in-process here).
if (runs('batch'))
  await withService({}, async (service) => {
    const count = benchCount('BENCH_BATCH_TRANSFERS', process.env.BENCH_BATCH_TRANSFERS, 2000);
    const figures = await benchBatchLifecycles(service, count);
    report.section({
      title: `A pain.001 batch of ${count} transfers (whole local stack, workflow on)`,
      table: {
        columns: ['measure', 'ms'],
        rows: [
          [
            `request to its 202 (${(figures.bytes / 1024).toFixed(0)} KB of XML, ${figures.attempts} attempt${figures.attempts === 1 ? '' : 's'})`,
            fixed(figures.msTo202, 0),
          ],
          ["202 to the first transfer's first status change", fixed(figures.msFrom202ToFirstFirstChange, 0)],
          ["202 to the last transfer's first status change", fixed(figures.msFrom202ToLastFirstChange, 0)],
        ],
      },
      notes: [
        "First status change: the history entry after Received (AcceptedTechnicalValidation or a rejection), by its own date. Locally the workflow shares the process with the API and runs at most 16 tasks at once; on AWS the starts go at Step Functions' StartExecution rate.",
      ],
    });
  });
if (runs('batch')) await report.write();

// Table calls, capacity units and CPU per settled transfer, counted inside dynalite: a service of
// its own, so the counter weighs on no other figure.
if (runs('table-calls')) {
  const counting = await tableCallCounting(process.env.NODE_OPTIONS);
  try {
    await withService(counting.env, async (service, api) => {
      const happy = await benchHappyPathTableCalls(service, api, counting.directory);
      report.section({
        title: 'Table calls per settled transfer',
        lines: preformatted(formatHappyPath(happy)),
      });
    });
  } finally {
    await counting.remove();
  }
}
// The authorizer's revocation check (one client read per invocation API Gateway does not answer
// from its cache), side by side with the same authorizer reading the client from memory.
if (runs('authorizer'))
  await withService({ LOCAL_LIFECYCLE: 'off' }, async (service) => {
    const concurrency = benchCount('BENCH_CONCURRENCY', process.env.BENCH_CONCURRENCY, 16);
    const bench = await benchAuthorizer(service, {
      invocations: 2000,
      concurrency,
      rounds: 3,
      tableName: 'credit-transfers',
    });
    report.section({
      title: `Authorizer: revocation check (2000 invocations x 3 rounds, concurrency ${concurrency}, alternating)`,
      table: {
        columns: ['authorizer', 'per second', 'p50 ms', 'p99 ms'],
        rows: [
          [
            'with the client read (GetItem, dynalite)',
            fixed(bench.withCheck.perSecond),
            fixed(bench.withCheck.p50Ms),
            fixed(bench.withCheck.p99Ms),
          ],
          [
            'client from memory (no check cost)',
            fixed(bench.withoutCheck.perSecond),
            fixed(bench.withoutCheck.p50Ms),
            fixed(bench.withoutCheck.p99Ms),
          ],
        ],
      },
      notes: [
        `Added per invocation: **${fixed(bench.addedP50Ms, 2)} ms** at the median; throughput ratio with / without **${fixed(bench.withCheck.perSecond / bench.withoutCheck.perSecond, 2)}**. ` +
          'On AWS it is one strongly consistent GetItem (0.5 RCU on demand) per authorizer invocation; API Gateway caches the answer per token for 30 s, so a client calling often pays it at most twice a minute per token.',
        "The local figure is dynalite's, one process answering every reader; a DynamoDB GetItem from Lambda in the same region takes a few milliseconds, the cost to expect per cache miss on AWS.",
      ],
    });
  });
if (runs('table-calls') || runs('authorizer')) await report.write();

// A correct token request during a flood of made-up client ids: the per-address budget of secret checks.
if (runs('token-flood')) {
  await withService({ LOCAL_LIFECYCLE: 'off' }, async (service) => {
    const { LOCAL_CLIENT } = await import('#local/service-process');
    const figures = await benchTokenFlood(service, LOCAL_CLIENT);
    const row = (name: string, flood: { correctP50Ms: number; floodPerSecond: number }) => [
      name,
      fixed(flood.correctP50Ms),
      fixed(flood.correctP50Ms / figures.quietP50Ms, 2),
      fixed(flood.floodPerSecond),
    ];
    report.section({
      title:
        'Token endpoint under a flood of made-up client ids (20 connections; 10 correct requests measured)',
      table: {
        columns: ['flood', 'correct request p50 ms', 'x quiet', 'flood requests answered per second'],
        rows: [
          ['none', fixed(figures.quietP50Ms), '1.00', '0'],
          row('from one address (its budget of 30 checks spent: no derivation)', figures.oneAddress),
          row(
            'spread over 40 addresses (each within its budget: two derivations each)',
            figures.manyAddresses,
          ),
        ],
      },
      notes: [
        "The second row is the flood the per-address budget answers; the third is what every flood cost before it, and what a flood from many addresses still costs: WAF's per-IP rule (300 token requests per 5 minutes) is the bound there.",
      ],
    });
  });
  await report.write();
}

// One tenant's flood of initiations against another tenant's webhooks and status reads.
if (runs('fairness')) {
  await withService({}, async (service, api) => {
    const floodSeconds = benchCount('BENCH_FLOOD_SECONDS', process.env.BENCH_FLOOD_SECONDS, 45);
    const figures = await benchFairness(service, api, {
      probes: 5,
      floodSeconds,
      concurrency: 16,
      timeoutMs: 600_000,
    });
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    const row = (name: string, probe: { webhookMs: number[]; statusReadMs: number[] }) => [
      name,
      fixed(median(probe.webhookMs)),
      fixed(Math.max(...probe.webhookMs)),
      fixed(median(probe.statusReadMs)),
    ];
    report.section({
      title: `Fairness between tenants: another tenant's webhooks and status reads during a ${floodSeconds} s flood of initiations (concurrency 16, 5 probe transfers)`,
      table: {
        columns: ['probe tenant', 'webhook delay p50 ms', 'webhook delay max ms', 'status read p50 ms'],
        rows: [row('idle runtime', figures.idle), row('during the flood', figures.flooded)],
      },
      notes: [
        `The flood made ${figures.floodInitiations} initiations in ${fixed(figures.floodSeconds)} s. Webhook delay is from the probe transfer's final status change to the receipt of its webhook; ratio flooded / idle at the median **${fixed(median(figures.flooded.webhookMs) / Math.max(1, median(figures.idle.webhookMs)), 2)}**, status reads **${fixed(median(figures.flooded.statusReadMs) / Math.max(0.1, median(figures.idle.statusReadMs)), 2)}**. TENANT_RATE_LIMIT is off here (its local default), so nothing limits the flood's own rate: what is measured is the sharing of recording, delivery and the workflow between tenants.`,
      ],
    });
  });
  await report.write();
}

// Webhook delivery between tenants: one tenant's flood or backlog against another's first webhooks and retries.
if (runs('delivery-fairness')) {
  const floodSeconds = benchCount('BENCH_FLOOD_SECONDS', process.env.BENCH_FLOOD_SECONDS, 30);
  const backlogTransfers = benchCount('BENCH_BACKLOG_TRANSFERS', process.env.BENCH_BACKLOG_TRANSFERS, 40);
  const waitMs = 150_000;
  let first: Awaited<ReturnType<typeof benchFirstWebhookFairness>> | undefined;
  await withService({}, async (service, api) => {
    first = await benchFirstWebhookFairness(service, api, {
      floodSeconds,
      concurrency: 16,
      afterProbes: 4,
      waitMs,
    });
  });
  let retries: Awaited<ReturnType<typeof benchRetryFairness>> | undefined;
  await withService(
    { WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1,1,1,1,1', WEBHOOK_DISABLE_AFTER_SECONDS: '86400' },
    async (service, api) => {
      retries = await benchRetryFairness(service, api, { backlogTransfers, probes: 3, waitMs });
    },
  );
  if (first === undefined || retries === undefined) throw new Error('delivery fairness: no figures');
  const seconds = (ms: number) => fixed(ms / 1000, 1);
  const row = (name: string, delays: Delays) => {
    const sorted = [...delays.ms].sort((a, b) => a - b);
    return [
      name,
      String(delays.ms.length),
      seconds(sorted[Math.floor(sorted.length / 2)] ?? 0),
      seconds(sorted.at(-1) ?? 0),
      delays.missing === 0 ? '0' : `${delays.missing} (counted as ${seconds(waitMs)} s)`,
    ];
  };
  report.section({
    title: `Webhook delivery fairness between tenants: tenant A floods ${floodSeconds} s of initiations, or has ${retries.backlog} deliveries to 10 trickling endpoints; tenant B's first webhooks and retries`,
    table: {
      columns: ["tenant B's", 'count', 'median s', 'max s', 'not arrived'],
      rows: [
        row('first webhook, transfer initiated mid-flood (change to receipt)', first.duringFlood),
        row('first webhook, transfers initiated 5, 10, 15, 20 s after the flood', first.afterFlood),
        row('retry lateness (receipt after due: 1 s after the failed attempt)', retries.lateness),
      ],
    },
    notes: [
      `The flood (16 at once, tenant A with a webhook endpoint answering at once) made ${first.floodInitiations} initiations in ${fixed(first.floodSeconds)} s. The backlog: ${backlogTransfers} transfers of A, each status event to 10 endpoints that answer a byte a second (each attempt lasts its 10 s limit), queued within ${fixed(retries.backlogSeconds)} s; B's endpoint fails each event's first attempt, its retry due 1 s later (WEBHOOK_RETRY_SCHEDULE_SECONDS=1,...). The bound is 30 s.`,
    ],
  });
  await report.write();
}

// DPoP replay detection: one conditional write of each proof's jti per API call with a bound token.
if (runs('dpop-replay')) {
  await withService({ LOCAL_LIFECYCLE: 'off' }, async (service) => {
    const concurrency = benchCount('BENCH_CONCURRENCY', process.env.BENCH_CONCURRENCY, 16);
    const bench = await benchDpopReplay(service, {
      invocations: 1000,
      concurrency,
      rounds: 3,
      tableName: 'credit-transfers',
    });
    report.section({
      title: `DPoP replay detection (1000 authorizer invocations x 3 rounds, concurrency ${concurrency}, alternating)`,
      table: {
        columns: ['authorizer with a bound token', 'per second', 'p50 ms', 'p99 ms'],
        rows: [
          [
            "proof's jti written (conditional PutItem, dynalite)",
            fixed(bench.withGuard.perSecond),
            fixed(bench.withGuard.p50Ms),
            fixed(bench.withGuard.p99Ms),
          ],
          [
            'jti kept in memory (no replay cost)',
            fixed(bench.withoutGuard.perSecond),
            fixed(bench.withoutGuard.p50Ms),
            fixed(bench.withoutGuard.p99Ms),
          ],
        ],
      },
      notes: [
        `Counted: **${fixed(bench.writesPerCall, 2)} conditional PutItem** per call, **${fixed(bench.writeUnitsPerRecord, 2)} WCU** each: ` +
          `**$${fixed(bench.writeUsdPerMillion, 3)} per million calls** at the on-demand write price of docs/aws-prices.json. ` +
          `Added latency at the median: ${fixed(bench.addedP50Ms, 2)} ms (noisy: a shared machine).`,
        `A bound token also needs the authorizer on every call (its answer is never cached, or a replayed proof would pass): ` +
          `$${fixed(bench.invocationUsdPerMillion, 3)} per million in Lambda requests, plus its duration; a bearer token has the same uncached authorizer today.`,
      ],
    });
  });
  await report.write();
}

// Memory under anonymous uploads: bodies are limited before they are read, so it stays flat.
if (runs('upload-memory')) {
  await withService({ LOCAL_LIFECYCLE: 'off' }, async (service) => {
    const figures = await benchUploadMemory(service, { uploads: 100, megabytes: 10 });
    report.section({
      title: 'Server memory under 100 anonymous 10 MB uploads',
      lines: formatUploadMemory(figures),
    });
  });
  await report.write();
}

// Hostile pain.001 uploads beside ordinary ones: each refused by bounds measured in one pass
// before the parser, at a cost no larger than an ordinary message's.
if (runs('hostile-uploads')) {
  await withService({ LOCAL_LIFECYCLE: 'off' }, async (service) => {
    const figures = await benchHostileUploads(service);
    report.section({
      title: 'Hostile pain.001 uploads beside ordinary ones (one at a time, whole local stack)',
      table: {
        columns: [
          'upload',
          'KB',
          'answer',
          'server CPU ms',
          'ms to answer',
          'list sent meanwhile, ms',
          'RSS after, MB',
        ],
        rows: hostileUploadRows(figures),
      },
      notes: [
        'Server CPU: the service process (HTTP server and handlers), from /proc, in steps of 10 ms. The bounds (2,000 transfers, 200,000 elements, 32 levels, 32 attributes) are applied in one pass over the text before the XML parser; docs/iso20022.md.',
      ],
    });
  });
  await report.write();
}

// The local runtime's IAM check (LOCAL_IAM), per call: what it adds locally, never on AWS.
if (runs('iam-check')) {
  const calls = benchCount('BENCH_IAM_CALLS', process.env.BENCH_IAM_CALLS, 2000);
  const figures = await benchIamCheck(calls);
  report.section({
    title: `Local IAM check: cost per call (${calls} decisions each, in process)`,
    table: {
      columns: ['call', 'µs, evaluated', 'µs, remembered', 'ratio'],
      rows: figures.map((figure) => [
        figure.name,
        fixed(figure.evaluatedMicroseconds),
        fixed(figure.rememberedMicroseconds),
        fixed(figure.evaluatedMicroseconds / figure.rememberedMicroseconds),
      ]),
    },
    notes: [
      'Made before every AWS SDK call a function makes locally (npm start, the integration tests); the other sections run with LOCAL_IAM=off.',
      'Each call names a new key. Evaluated: iam-simulate decides it, as the first call of each kind costs. Remembered: the decision made for a key the policies cannot tell apart answers it (scripts/local/iam-decision-key.ts), as every later call of that kind is answered.',
    ],
  });
  await report.write();
}

// Every function as deployed (lib/constructs/bundling.ts): bundle size, and a cold load plus first
// invocation in a fresh process against a reference handler making one GetItem, built the same way.
if (runs('bundles')) {
  const bundleLines = await benchBundles({
    runs: benchCount('BENCH_BUNDLE_RUNS', process.env.BENCH_BUNDLE_RUNS, 9),
  });
  for (const line of bundleLines) console.log(line);
  report.section({
    title: 'Function bundles: size and cold start',
    lines: [
      'How to read this table, what the gap to the target is made of, and the traced figures: "Cold start against the one-GetItem reference" below.',
      '',
      ...preformatted(bundleLines),
    ],
  });
  await report.write();
}

// Each function's duration at several memory sizes (its CPU share capped as Lambda caps it), and
// the size chosen for it against the one lib/function-memory.ts configures.
if (runs('memory')) {
  const memoryLines = await benchMemory({
    processes: benchCount('BENCH_MEMORY_PROCESSES', process.env.BENCH_MEMORY_PROCESSES, 2),
    warm: benchCount('BENCH_MEMORY_WARM', process.env.BENCH_MEMORY_WARM, 15),
    sizes: process.env.BENCH_MEMORY_SIZES?.split(',').map(Number) ?? DEFAULT_SIZES,
  });
  for (const line of memoryLines) console.log(line);
  report.section({
    title: 'Memory per function: duration at several sizes, and the size chosen',
    lines: preformatted(memoryLines),
  });
  await report.write();
}

// The CLI's start, from built JavaScript and through the TypeScript loader: a fresh process to `--help`.
if (runs('cli')) {
  const runCount = benchCount('BENCH_CLI_RUNS', process.env.BENCH_CLI_RUNS, 9);
  const figures = benchCliStart({ runs: runCount });
  report.section({
    title: `CLI start: a fresh process to --help (median of ${runCount})`,
    table: {
      columns: ['how', 'command', 'median ms', 'fastest ms'],
      rows: figures.map((figure) => [
        figure.name,
        `\`${figure.command}\``,
        fixed(figure.medianMs, 0),
        fixed(figure.minMs, 0),
      ]),
    },
    notes: [
      'Target: under 500 ms from built JavaScript on this machine. `npm run cli` runs the built file and builds client/dist first when a client source is newer (client/scripts/built-cli.mjs); the loader row is what it ran before. Wall time on a shared machine: noisy; the floor row is Node starting alone at the same moment.',
    ],
  });
  await report.write();
}

// Pagination-Total at scale: one tenant with 100k, then 1M stored transfers; the workflow is off
// so that only the list runs.
if (runs('list-scale'))
  await withService({ LOCAL_LIFECYCLE: 'off' }, async (service, api) => {
    const sizes = (process.env.BENCH_SCALE_SIZES ?? '100000,1000000').split(',').map(Number);
    const rows = await benchListAtScale(service, api, {
      sizes,
      unboundedUpTo: benchCount(
        'BENCH_SCALE_UNBOUNDED_UP_TO',
        process.env.BENCH_SCALE_UNBOUNDED_UP_TO,
        100_000,
      ),
      seedBudgetSeconds: benchCount(
        'BENCH_SCALE_SEED_BUDGET_SECONDS',
        process.env.BENCH_SCALE_SEED_BUDGET_SECONDS,
        1200,
      ),
    });
    const measured = rows.filter((row) => row.unboundedCountMs !== undefined);
    const perEntryMs = measured.length
      ? (measured.at(-1)?.unboundedCountMs ?? 0) / (measured.at(-1)?.stored ?? 1)
      : undefined;
    const seedRate = (rows.at(-1)?.stored ?? 0) / rows.reduce((sum, row) => sum + row.seedSeconds, 0);
    scaleReport.section({
      title: `Pagination-Total and status.eq at scale: first page of one tenant (limit 100), count bounded at ${MAX_COUNTED_ENTRIES} entries`,
      lines: [
        "Transfers seeded straight into the table with the store's own item mapping (BatchWriteItem, 25 a batch, 16 in flight). " +
          'First page over HTTP (whole stack), median of 5; the unbounded count is the same query with no bound, through the adapter.',
      ],
      table: {
        columns: [
          'stored',
          'seeded in s',
          'first page ms',
          'Pagination-Total',
          'amount.gte page ms',
          'its Pagination-Total',
          'count RCU',
          'status.eq=Rejected page ms',
          'its Pagination-Total',
          'page RCU: no filter / status.eq',
          'unbounded count ms',
          'unbounded count RCU',
        ],
        rows: rows.map((row) => [
          row.stored === row.target ? row.stored : `${row.stored} (of ${row.target}: seeding budget reached)`,
          fixed(row.seedSeconds),
          fixed(row.firstPageMs),
          row.total,
          fixed(row.refinedPageMs),
          row.refinedTotal,
          fixed(row.countUnits),
          fixed(row.statusPageMs),
          row.statusTotal,
          `${fixed(row.pageUnits)} / ${fixed(row.statusPageUnits)}`,
          row.unboundedCountMs === undefined
            ? perEntryMs
              ? `~${fixed(perEntryMs * row.stored, 0)} (extrapolated)`
              : '-'
            : fixed(row.unboundedCountMs),
          row.unboundedCountUnits === undefined ? '-' : fixed(row.unboundedCountUnits),
        ]),
      },
      notes: [
        'status.eq reads one partition of the status index (tenant and status), so its first page costs what an unfiltered one does (compare the page read units; one transfer in ten is Rejected, and its count stops at the same bound).',
        `Seeding rate: ${fixed(seedRate, 0)} transfers/s (1M in about ${fixed(1_000_000 / seedRate / 60, 1)} min at that rate).`,
        `Unbounded, the count grows with the tenant's transfers (DynamoDB returns at most 1 MB per Query, so ${fixed(
          (1_000_000 * 260) / 1_048_576,
          0,
        )} sequential Query calls for 1M entries of ~260 B); bounded, the first page costs the same at any size, and its Pagination-Total reads \`${MAX_COUNTED_ENTRIES}+\`.`,
      ],
      charts: [
        {
          name: 'list-cost-by-size',
          title: "First list page against the tenant's stored transfers",
          spec: lineChart({
            title: 'First page with Pagination-Total (ms)',
            values: rows.flatMap((row) => [
              { stored: row.stored, ms: row.firstPageMs, series: 'bounded count, no filter (HTTP)' },
              { stored: row.stored, ms: row.refinedPageMs, series: 'bounded count, amount.gte (HTTP)' },
              ...(row.unboundedCountMs !== undefined
                ? [
                    {
                      stored: row.stored,
                      ms: row.unboundedCountMs,
                      series: 'unbounded count (adapter, measured)',
                    },
                  ]
                : perEntryMs
                  ? [
                      {
                        stored: row.stored,
                        ms: perEntryMs * row.stored,
                        series: 'unbounded count (extrapolated)',
                      },
                    ]
                  : []),
            ]),
            x: { field: 'stored', title: 'transfers stored for the tenant', type: 'ordinal' },
            y: { field: 'ms', title: 'ms', scale: 'log' },
            series: { field: 'series', title: '' },
          }),
        },
      ],
    });
  });

if (runs('list-scale')) await scaleReport.write();

// Webhook delivery: one endpoint, then 100 endpoints of one client (each on a fresh service), the
// same transfers; every status change goes to every endpoint of a receiver on 127.0.0.1.
if (runs('webhooks')) {
  const transfers = benchCount('BENCH_WEBHOOK_TRANSFERS', process.env.BENCH_WEBHOOK_TRANSFERS, 20);
  const timeoutMs =
    benchCount('BENCH_WEBHOOK_TIMEOUT_SECONDS', process.env.BENCH_WEBHOOK_TIMEOUT_SECONDS, 300) * 1000;
  const figures: WebhookBenchFigures[] = [];
  for (const endpoints of [1, 100]) {
    await withService({}, async (_service, api) => {
      figures.push(
        await benchWebhookDelivery(api, {
          endpoints,
          transfers,
          concurrency: 4,
          timeoutMs,
          label: `e${endpoints}`,
        }),
      );
    });
  }
  const [one, hundred] = figures;
  webhookReport.section({
    title: `Delivery latency and throughput (${transfers} transfers, 5 status changes each, to 1 and to 100 endpoints)`,
    lines: [
      "Latency: from the status change (the event's `data.date`) to its receipt by a local receiver answering 204 at once, every delivery counted. " +
        'Throughput: distinct deliveries over the time from the first status change to the last receipt (the lifecycle runs in the same process, settling transfers meanwhile).',
    ],
    table: {
      columns: [
        'endpoints',
        'transfers',
        'deliveries',
        'repeats',
        'p50 ms',
        'p99 ms',
        'max ms',
        'deliveries per second',
      ],
      rows: figures.map(webhookBenchRow),
    },
    notes:
      one && hundred
        ? [
            `100 endpoints against 1: latency p50 x**${fixed(hundred.p50Ms / one.p50Ms, 2)}**, p99 x**${fixed(hundred.p99Ms / one.p99Ms, 2)}**; deliveries per second x**${fixed(hundred.perSecond / one.perSecond, 1)}** (the delivery pool runs 64 attempts at once, 16 per client, 4 per endpoint).`,
            'Locally the delivery worker reads the events file every 200 ms: that look, and recording the event with a queued delivery per endpoint before the first attempt, come before any receipt; so does the workflow publishing the status change after its step.',
            "The 100 endpoints are one client's: its 16 attempts in flight bound the rate (each attempt is about five table calls besides the POST: claim, endpoint, event, attempt record, finish), so a client's 100 endpoints wait their turn while another client's deliveries go ahead. With 1 endpoint the rate is the transfers', not the worker's.",
          ]
        : [],
  });
  await webhookReport.write();
}
