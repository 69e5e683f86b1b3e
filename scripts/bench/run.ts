import { rm } from 'node:fs/promises';
import { type LocalService, startLocalService } from '#local/service-process';
import { benchBundles } from './bundles.ts';
import { benchInitiationCapacity, benchInitiationThroughput } from './initiation.ts';
import { benchLifecycleThroughput, benchLifecycleTransitions, formatLifecycleReport } from './lifecycle.ts';
import { benchListCreditTransfers, formatListBenchReport } from './list.ts';
import { benchListAtScale, MAX_COUNTED_ENTRIES } from './list-scale.ts';
import { BenchReport, barChart, lineChart } from './report.ts';
import { type BenchClient, benchClient, fixed, requestToken } from './support.ts';
import { benchUploadMemory, formatUploadMemory } from './upload-memory.ts';

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
  const fresh = await startLocalService({ env });
  try {
    await section(fresh, benchClient(fresh.baseUrl, await requestToken(fresh.baseUrl)));
  } finally {
    await fresh.stop();
    await rm(fresh.dataDir, { recursive: true, force: true });
  }
};

const preformatted = (lines: string[]) => ['```', ...lines.map((line) => line.replace(/^\n/, '')), '```'];

const report = new BenchReport('bench', ['## Service figures (`npm run bench`)']);

// The API alone: on AWS the workflow runs in Step Functions, not beside the API's functions, so
// here it is off, and its own cost is measured in the lifecycle section.
await withService({ LOCAL_LIFECYCLE: 'off' }, async (service, api) => {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const requests = Number(process.env.BENCH_REQUESTS ?? 3000);
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

await report.write();

// Memory under anonymous uploads: bodies are limited before they are read, so it stays flat.
await withService({ LOCAL_LIFECYCLE: 'off' }, async (service) => {
  const figures = await benchUploadMemory(service, { uploads: 100, megabytes: 10 });
  report.section({
    title: 'Server memory under 100 anonymous 10 MB uploads',
    lines: formatUploadMemory(figures),
  });
});
await report.write();

// The list figures compare tables of known sizes.
await withService({}, async (listService, api) => {
  const largeCount = Number(process.env.BENCH_LIST_STORED ?? 100_000);
  const lines = formatListBenchReport(await benchListCreditTransfers(listService, api, { largeCount }));
  report.section({
    title: 'List: one page, Pagination-Total, index projections',
    lines: preformatted(lines),
  });
});
await report.write();

// The lifecycle runs its workflows in the service process: nothing else in flight.
await withService({}, async (lifecycleService, api) => {
  const transitions = await benchLifecycleTransitions(lifecycleService, api);
  const throughput = await benchLifecycleThroughput(lifecycleService, api, {
    transfers: Number(process.env.BENCH_LIFECYCLE_TRANSFERS ?? 2000),
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 16),
  });
  report.section({
    title: 'Lifecycle: state transitions and settlement throughput',
    lines: preformatted(formatLifecycleReport(transitions, throughput)),
  });
});

await report.write();

// Every function as deployed (lib/constructs/bundling.ts): bundle size, and a cold load plus first
// invocation in a fresh process against an empty handler built the same way.
const bundleLines = await benchBundles({ runs: Number(process.env.BENCH_BUNDLE_RUNS ?? 9) });
for (const line of bundleLines) console.log(line);
report.section({ title: 'Function bundles: size and cold start', lines: preformatted(bundleLines) });
await report.write();

// Pagination-Total at scale: one tenant with 100k, then 1M stored transfers; the workflow is off
// so that only the list runs.
await withService({ LOCAL_LIFECYCLE: 'off' }, async (service, api) => {
  const sizes = (process.env.BENCH_SCALE_SIZES ?? '100000,1000000').split(',').map(Number);
  const rows = await benchListAtScale(service, api, {
    sizes,
    unboundedUpTo: Number(process.env.BENCH_SCALE_UNBOUNDED_UP_TO ?? 100_000),
    seedBudgetSeconds: Number(process.env.BENCH_SCALE_SEED_BUDGET_SECONDS ?? 1200),
  });
  const measured = rows.filter((row) => row.unboundedCountMs !== undefined);
  const perEntryMs = measured.length
    ? (measured.at(-1)?.unboundedCountMs ?? 0) / (measured.at(-1)?.stored ?? 1)
    : undefined;
  const seedRate = (rows.at(-1)?.stored ?? 0) / rows.reduce((sum, row) => sum + row.seedSeconds, 0);
  report.section({
    title: `Pagination-Total at scale: first page of one tenant (limit 100), count bounded at ${MAX_COUNTED_ENTRIES} entries`,
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
        row.unboundedCountMs === undefined
          ? perEntryMs
            ? `~${fixed(perEntryMs * row.stored, 0)} (extrapolated)`
            : '-'
          : fixed(row.unboundedCountMs),
        row.unboundedCountUnits === undefined ? '-' : fixed(row.unboundedCountUnits),
      ]),
    },
    notes: [
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

await report.write();
