import { rm } from 'node:fs/promises';
import { LOCAL_CLIENT, type LocalService, startLocalService } from '#local/service-process';
import { benchBundles } from './bundles.ts';
import { benchInitiationCapacity, benchInitiationThroughput } from './initiation.ts';
import { benchLifecycleThroughput, benchLifecycleTransitions, formatLifecycleReport } from './lifecycle.ts';
import { benchListCreditTransfers, formatListBenchReport } from './list.ts';
import { type BenchClient, benchClient, fixed } from './support.ts';

/**
 * `npm run bench`: figures measured side by side in one run, on a fresh local service.
 * Not a test: it prints, and it fails only if the service does.
 */
const requestToken = async (baseUrl: string): Promise<string> => {
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: LOCAL_CLIENT.clientId,
      client_secret: LOCAL_CLIENT.clientSecret,
    }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
};

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

// The API alone: on AWS the workflow runs in Step Functions, not beside the API's functions, so
// here it is off, and its own cost is measured in the lifecycle section.
await withService({ LOCAL_LIFECYCLE: 'off' }, async (service, api) => {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const requests = Number(process.env.BENCH_REQUESTS ?? 3000);

  console.log(
    `\n## Initiation throughput (${requests} requests, concurrency ${concurrency}, same dynalite, local workflow off)`,
  );
  await benchInitiationThroughput(service, api, { requests: 200, concurrency, rounds: 1 }); // warm-up
  const throughput = await benchInitiationThroughput(service, api, { requests, concurrency, rounds: 4 });
  console.log(
    `HTTP initiations:        ${fixed(throughput.viaHttp.perSecond)}/s  (p50 ${fixed(throughput.viaHttp.p50Ms)} ms, p99 ${fixed(throughput.viaHttp.p99Ms)} ms)`,
  );
  console.log(
    `raw conditional PutItem: ${fixed(throughput.raw.perSecond)}/s  (p50 ${fixed(throughput.raw.p50Ms)} ms, p99 ${fixed(throughput.raw.p99Ms)} ms)`,
  );
  console.log(`ratio HTTP / raw:        ${fixed(throughput.ratio, 2)}  (target >= 0.5)`);

  console.log(
    '\n## Write capacity per initiation, table item (ReturnConsumedCapacity)\n' +
      'Index entries (list and recovery indexes, under 1 KB each) add 1 WCU apiece: see the list section. ' +
      'dynalite reports nothing for a refused conditional write, which DynamoDB bills as one write of the item size.',
  );
  for (const row of await benchInitiationCapacity(service)) {
    console.log(
      `${row.label.padEnd(40)} item ${String(row.itemBytes).padStart(6)} B = ${row.startedKilobytes} started KB -> ${row.writeUnits} WCU written, ${row.readUnits} RCU read`,
    );
  }
});

// The list figures compare tables of known sizes.
await withService({}, async (listService, api) => {
  const largeCount = Number(process.env.BENCH_LIST_STORED ?? 100_000);
  const report = await benchListCreditTransfers(listService, api, { largeCount });
  for (const line of formatListBenchReport(report)) console.log(line);
});

// The lifecycle runs its workflows in the service process: nothing else in flight.
await withService({}, async (lifecycleService, api) => {
  const transitions = await benchLifecycleTransitions(lifecycleService, api);
  const throughput = await benchLifecycleThroughput(lifecycleService, api, {
    transfers: Number(process.env.BENCH_LIFECYCLE_TRANSFERS ?? 2000),
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 16),
  });
  for (const line of formatLifecycleReport(transitions, throughput)) console.log(line);
});

for (const line of await benchBundles({ runs: Number(process.env.BENCH_BUNDLE_RUNS ?? 7) }))
  console.log(line);
