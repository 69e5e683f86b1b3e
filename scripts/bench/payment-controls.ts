import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LocalService } from '#local/service-process';
import { realisticCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import type { Prices } from './bill.ts';
import { serviceProcesses } from './processes.ts';
import type { ReportSection } from './report.ts';
import {
  type BenchClient,
  benchClient,
  combine,
  fixed,
  type RunFigures,
  runConcurrently,
} from './support.ts';
import { readTableFigures, type TableFigures } from './table-figures.ts';

/**
 * What a tenant's payment controls (docs/approvals.md) cost per transfer: the same transfers for
 * tenants set up alike but for their controls (none, an approval rule that does not match, day and
 * month limits nothing breaches, both), side by side in one run. Initiations per second, and
 * the table calls and capacity units each transfer costs, counted inside dynalite
 * (table-call-counter.mjs): at initiation, and over its whole life to a settlement (a limit keeps
 * it) or a cancellation (a limit gives it back).
 */

const CURRENCY = 'USD';
const SETTLED_ACCOUNT = '001-DDA-01-424242';
/** Never matched by the bench's transfers (USD 1250.75), so the rule is read and evaluated, and holds nothing. */
const UNMATCHED_RULE = {
  name: 'very large USD payments',
  currency: CURRENCY,
  minimumAmount: '5000000.00',
  approvalsRequired: 2,
};
/** Each account of the tenant on its own; far above what the bench pays, so nothing is breached. */
const GENEROUS_LIMITS = (['day', 'month'] as const).map((period) => ({
  currency: CURRENCY,
  period,
  maxAmount: '1000000000.00',
  maxCount: 1_000_000,
  onBreach: 'reject',
}));

export interface ControlsConfiguration {
  name: string;
  /** The tenant's controls document; none stored when undefined. */
  controls?: Record<string, unknown>;
  /**
   * Its transfers spread over this many debtor accounts (each with counters of its own) rather
   * than all from one: the initiation rate only, to tell a hot counter from the calls it costs.
   */
  accounts?: number;
}

export const CONTROLS_CONFIGURATIONS: readonly ControlsConfiguration[] = [
  { name: 'controls off (no document)' },
  { name: 'an approval rule, not matched', controls: { approvalRules: [UNMATCHED_RULE] } },
  { name: 'day and month limits, not breached', controls: { limits: GENEROUS_LIMITS } },
  {
    name: 'the rule and the limits',
    controls: { approvalRules: [UNMATCHED_RULE], limits: GENEROUS_LIMITS },
  },
  { name: 'the limits, transfers over 100 accounts', controls: { limits: GENEROUS_LIMITS }, accounts: 100 },
];

/** The debtor account of a configuration's transfer number `index`. */
const accountOf = (configuration: ControlsConfiguration, index: number): string =>
  configuration.accounts === undefined
    ? SETTLED_ACCOUNT
    : `001-DDA-01-${String(500_000 + (index % configuration.accounts))}`;

/** The sandbox holds a transfer from an account ending in -hold: submitted, never settled, so a cancellation recalls it. */
const HELD_ACCOUNT = '001-DDA-01-hold';
const SCOPES = 'transactions:read transactions:write payment-controls:manage';

/** A tenant per configuration, each with one client made as `npm run client:create` makes one. */
interface ConfiguredTenant {
  configuration: ControlsConfiguration;
  api: BenchClient;
}

const createClient = (service: LocalService, tenant: string, clientId: string, secret: string) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../client-create.ts', import.meta.url)),
        '--client-id',
        clientId,
        '--client-secret',
        secret,
        '--scope',
        SCOPES,
        '--tenant',
        tenant,
      ],
      { env: { ...process.env, DATA_DIR: service.dataDir }, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`client-create exited ${code}`))));
  });

const tokenOf = async (baseUrl: string, clientId: string, secret: string): Promise<string> => {
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
    }),
  });
  if (response.status !== 200) throw new Error(`token for ${clientId}: ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
};

/** A tenant for each configuration given, on this service, its controls stored through the API. */
export const configuredTenants = async (
  service: LocalService,
  configurations: readonly ControlsConfiguration[] = CONTROLS_CONFIGURATIONS,
): Promise<ConfiguredTenant[]> => {
  const tenants: ConfiguredTenant[] = [];
  for (const configuration of configurations) {
    const tenant = `controls-bench-${CONTROLS_CONFIGURATIONS.indexOf(configuration)}`;
    const clientId = `${tenant}-client`;
    const secret = `${tenant}-secret-0123456789abcdef`;
    await createClient(service, tenant, clientId, secret);
    const token = await tokenOf(service.baseUrl, clientId, secret);
    if (configuration.controls) {
      const stored = await fetch(`${service.baseUrl}/v1/payment-controls`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(configuration.controls),
      });
      if (stored.status !== 200)
        throw new Error(`controls of ${tenant}: ${stored.status} ${await stored.text()}`);
    }
    tenants.push({ configuration, api: benchClient(service.baseUrl, token) });
  }
  return tenants;
};

/** One call with the tenant's token, so the authorizer's answer is cached before anything is counted. */
const warmAuthorizer = async (api: BenchClient): Promise<void> => {
  const reply = await api.get('/v1/payment-controls');
  if (reply.status !== 200) throw new Error(`controls read answered ${reply.status}: ${reply.text}`);
};

/** The bench's transfer: a typical business payment (the bill bench's), from `debtorAccountId`. */
export const controlsBenchTransfer = (debtorAccountId = SETTLED_ACCOUNT) =>
  realisticCreditTransfer({ debtorAccountId });

const initiate = async (api: BenchClient, debtorAccountId: string): Promise<string> => {
  const reply = await api.post('/v1/payments/credit-transfers', controlsBenchTransfer(debtorAccountId), {
    idempotencyId: randomUUID(),
  });
  if (reply.status !== 202) throw new Error(`initiation answered ${reply.status}: ${reply.text}`);
  const { paymentId, status } = JSON.parse(reply.text) as { paymentId: string; status: string };
  // A transfer held for approval or rejected would measure another path than the one compared.
  if (status !== 'Received') throw new Error(`initiation answered status ${status}, not Received`);
  return paymentId;
};

/** Table figures of the service's own items (not sandbox clearing's, not the local runtime's), per transfer. */
export interface ServiceFigures {
  /** Calls by operation (GetItem, Query, PutItem, UpdateItem, ...). */
  calls: Record<string, number>;
  readUnits: number;
  writeUnits: number;
  refused: number;
  /** Calls and units by kind of item, every owner's (table-call-counter.mjs `byKind`). */
  byKind: Record<string, number>;
}

const OWNER = 'service ';

const serviceFigures = (from: TableFigures, to: TableFigures, transfers: number): ServiceFigures => {
  const per = (value: number) => value / Math.max(1, transfers);
  const calls: Record<string, number> = {};
  for (const [name, value] of Object.entries(to.calls)) {
    if (!name.startsWith(OWNER)) continue;
    const added = value - (from.calls[name] ?? 0);
    if (added > 0) calls[name.slice(OWNER.length)] = per(added);
  }
  const units = (part: 'readUnits' | 'writeUnits') =>
    per((to[part].service ?? 0) - (from[part].service ?? 0));
  const byKind: Record<string, number> = {};
  for (const [name, value] of Object.entries(to.byKind ?? {})) {
    const added = value - (from.byKind?.[name] ?? 0);
    if (added !== 0) byKind[name] = per(added);
  }
  return {
    calls,
    readUnits: units('readUnits'),
    writeUnits: units('writeUnits'),
    refused: per(to.conditionFailures - from.conditionFailures),
    byKind,
  };
};

const addFigures = (into: ServiceFigures, figures: ServiceFigures, weight: number): void => {
  for (const [name, value] of Object.entries(figures.calls))
    into.calls[name] = (into.calls[name] ?? 0) + value * weight;
  into.readUnits += figures.readUnits * weight;
  into.writeUnits += figures.writeUnits * weight;
  into.refused += figures.refused * weight;
  for (const [name, value] of Object.entries(figures.byKind))
    into.byKind[name] = (into.byKind[name] ?? 0) + value * weight;
};

const noFigures = (): ServiceFigures => ({ calls: {}, readUnits: 0, writeUnits: 0, refused: 0, byKind: {} });

export interface ThroughputFigures {
  configuration: string;
  run: RunFigures;
  /** Per initiation, averaged over every measured one. */
  table: ServiceFigures;
}

/**
 * Initiations per second for each configuration, at the same concurrency, in alternating rounds
 * (the order turning each round) so that a growing table or a busy moment weighs on all alike;
 * the table counter read between batches gives each configuration's calls per initiation.
 * Locally the workflow is off: the API alone, as the initiation section measures it.
 */
export const benchControlsThroughput = async (
  service: LocalService,
  countsDirectory: string,
  options: { transfers: number; concurrency: number; rounds: number },
): Promise<ThroughputFigures[]> => {
  const tenants = await configuredTenants(service);
  const processes = await serviceProcesses(service.pid);
  const perRound = Math.ceil(options.transfers / options.rounds);
  const batch = (tenant: ConfiguredTenant, requests: number) =>
    runConcurrently({ requests, concurrency: options.concurrency }, async (index) => {
      await initiate(tenant.api, accountOf(tenant.configuration, index));
    });
  for (const tenant of tenants) await batch(tenant, 100); // warm-up: each tenant's first reads and counters
  const runs = tenants.map(() => [] as RunFigures[]);
  const tables = tenants.map(noFigures);
  let reading = await readTableFigures(processes, countsDirectory);
  for (let round = 0; round < options.rounds; round++) {
    for (let step = 0; step < tenants.length; step++) {
      const index = (round + step) % tenants.length;
      const run = await batch(tenants[index] as ConfiguredTenant, perRound);
      const next = await readTableFigures(processes, countsDirectory);
      runs[index]?.push(run);
      addFigures(
        tables[index] as ServiceFigures,
        serviceFigures(reading, next, perRound),
        1 / options.rounds,
      );
      reading = next;
    }
  }
  return tenants.map((tenant, index) => ({
    configuration: tenant.configuration.name,
    run: combine(runs[index] ?? []),
    table: tables[index] as ServiceFigures,
  }));
};

/** paymentId -> every status its events reported so far (the local bus: events.jsonl). */
const statusesOf = async (service: LocalService): Promise<Map<string, Set<string>>> => {
  const text = await readFile(join(service.dataDir, 'events.jsonl'), 'utf8').catch(() => '');
  const statuses = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const { detail } = JSON.parse(line) as { detail: { paymentId: string; status: string } };
    const seen = statuses.get(detail.paymentId) ?? new Set();
    seen.add(detail.status);
    statuses.set(detail.paymentId, seen);
  }
  return statuses;
};

const untilEvery = async (
  service: LocalService,
  paymentIds: readonly string[],
  status: string,
  timeoutMs = 120_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const statuses = await statusesOf(service);
    const reached = paymentIds.filter((id) => statuses.get(id)?.has(status)).length;
    if (reached === paymentIds.length) return;
    if (Date.now() > deadline)
      throw new Error(`only ${reached} of ${paymentIds.length} transfers reached ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

/** Transfers counted by a limit in each period (`usedCount` of the usage endpoint), by period. */
type CountedByPeriod = Record<string, number>;

export type LifeOutcome = 'settled' | 'cancelled';

export interface LifeFigures {
  configuration: string;
  outcome: LifeOutcome;
  /** Per transfer, from its initiation to its final status. */
  table: ServiceFigures;
  /** With limits, what they count of the transfers' account once every transfer is final. */
  counted?: CountedByPeriod;
}

/**
 * The service's settings for each outcome. A cancelled transfer's first clearing poll comes after
 * the bench is done with it: the recall alone ends it, so every configuration takes the same path
 * (a poll racing the recall publishes the final status a second time, now and then).
 */
export const LIFE_SERVICE_ENV: Record<LifeOutcome, Record<string, string>> = {
  settled: {},
  // BENCH_CONTROLS_CANCEL_POLL_SECONDS=1 lets the polls race the recall, as they do on a stage.
  cancelled: { CLEARING_POLL_INITIAL_SECONDS: process.env.BENCH_CONTROLS_CANCEL_POLL_SECONDS ?? '120' },
};

const countedOf = async (api: BenchClient, debtorAccountId: string): Promise<CountedByPeriod> => {
  const reply = await api.get(
    `/v1/payment-controls/usage?debtorAccountId=${debtorAccountId}&currency=${CURRENCY}`,
  );
  if (reply.status !== 200) throw new Error(`usage answered ${reply.status}: ${reply.text}`);
  const { limits } = JSON.parse(reply.text) as { limits: { period: string; usedCount: number }[] };
  return Object.fromEntries(limits.map((limit) => [limit.period, limit.usedCount]));
};

/**
 * One configuration's transfers over their whole life, the workflow on, on a service of its own
 * (LIFE_SERVICE_ENV): `transfers` initiated and settled (a limit keeps what it counted), or
 * initiated from an account the sandbox clearing holds and cancelled once submitted (the recall
 * ends them Cancelled, and a limit gives back what it counted). Every service table call from the
 * first initiation to the last final status, per transfer.
 */
export const benchControlsLife = async (
  service: LocalService,
  countsDirectory: string,
  configuration: ControlsConfiguration,
  options: { transfers: number; outcome: LifeOutcome },
): Promise<LifeFigures> => {
  const [tenant] = await configuredTenants(service, [configuration]);
  if (tenant === undefined) throw new Error('no tenant');
  const processes = await serviceProcesses(service.pid);
  const account = options.outcome === 'settled' ? SETTLED_ACCOUNT : HELD_ACCOUNT;
  // The last publish step's bookkeeping (a limit's release) follows its event.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));
  await warmAuthorizer(tenant.api);
  await settle();
  const before = await readTableFigures(processes, countsDirectory);
  const paymentIds: string[] = [];
  await runConcurrently({ requests: options.transfers, concurrency: 4 }, async () => {
    paymentIds.push(await initiate(tenant.api, account));
  });
  if (options.outcome === 'settled') {
    await untilEvery(service, paymentIds, 'AcceptedSettlementCompleted');
  } else {
    await untilEvery(service, paymentIds, 'AcceptedSettlementInProcess');
    await runConcurrently({ requests: paymentIds.length, concurrency: 4 }, async (index) => {
      const reply = await tenant.api.post(`/v1/payments/credit-transfers/${paymentIds[index]}/cancellation`, {
        cancellationReason: 'Ordered twice',
      });
      if (reply.status !== 202) throw new Error(`cancellation answered ${reply.status}: ${reply.text}`);
    });
    await untilEvery(service, paymentIds, 'Cancelled');
  }
  await settle();
  const after = await readTableFigures(processes, countsDirectory);
  const limited = ((configuration.controls?.limits as unknown[] | undefined)?.length ?? 0) > 0;
  return {
    configuration: configuration.name,
    outcome: options.outcome,
    table: serviceFigures(before, after, options.transfers),
    ...(limited && { counted: await countedOf(tenant.api, account) }),
  };
};

const signed = (value: number, digits = 2): string => `${value >= 0 ? '+' : ''}${fixed(value, digits)}`;

const OPERATIONS = ['GetItem', 'Query', 'PutItem', 'UpdateItem'];

/** `GetItem 1.00, Query 1.00, PutItem 1.00, UpdateItem 2.00` (other operations after, when any). */
const callsText = (calls: Record<string, number>): string =>
  [
    ...OPERATIONS,
    ...Object.keys(calls)
      .filter((name) => !OPERATIONS.includes(name))
      .sort(),
  ]
    .map((name) => `${name} ${fixed(calls[name] ?? 0, 2)}`)
    .join(', ');

const totalCalls = (figures: ServiceFigures): number =>
  Object.values(figures.calls).reduce((sum, value) => sum + value, 0);

/** USD per million transfers of `figures` beyond `baseline`, at DynamoDB's on-demand prices. */
export const addedUsdPerMillion = (
  figures: ServiceFigures,
  baseline: ServiceFigures,
  prices: Prices,
): number =>
  ((figures.writeUnits - baseline.writeUnits) * prices.dynamoDbWriteRequestUnit.usd +
    (figures.readUnits - baseline.readUnits) * prices.dynamoDbReadRequestUnit.usd) *
  1_000_000;

/**
 * What `figures` adds to `baseline` by kind of item and operation (table-call-counter.mjs names
 * the kind from the key: `LIMIT_USAGE/USD` a limit counter, `PAYMENT_CONTROLS/VERSION` the
 * controls document, `TENANT` a transfer): `LIMIT_USAGE/USD UpdateItem +4.00 (+4.00 units)`.
 * Differences under 0.05 a transfer are left out: the local runtime's timers add a few calls
 * in proportion to a batch's duration, not to its transfers.
 */
export const addedByKind = (figures: ServiceFigures, baseline: ServiceFigures): string[] => {
  const differs = (name: string) => (figures.byKind[name] ?? 0) - (baseline.byKind[name] ?? 0);
  const names = new Set([...Object.keys(figures.byKind), ...Object.keys(baseline.byKind)]);
  const lines: string[] = [];
  for (const name of [...names].sort()) {
    // The service's items only, as the other columns: not the local runtime's, not sandbox clearing's.
    if (name.endsWith(' units') || name.endsWith(' refused') || /^(LOCAL_|SANDBOX_CLEARING)/.test(name))
      continue;
    const calls = differs(name);
    const units = name.includes(' index ') ? 0 : differs(`${name} units`);
    if (Math.abs(calls) < 0.05 && Math.abs(units) < 0.05) continue;
    // A Query names no key: its kind is empty.
    const label = name.trim();
    lines.push(
      name.includes(' index ')
        ? `${label} ${signed(calls)} units`
        : `${label} ${signed(calls)} (${signed(units)} units)`,
    );
  }
  return lines;
};

const costRow = (
  name: string,
  figures: ServiceFigures,
  baseline: ServiceFigures,
  prices: Prices,
): (string | number)[] => [
  name,
  callsText(figures.calls),
  fixed(figures.readUnits, 2),
  fixed(figures.writeUnits, 2),
  signed(totalCalls(figures) - totalCalls(baseline)),
  signed(figures.readUnits - baseline.readUnits),
  signed(figures.writeUnits - baseline.writeUnits),
  signed(addedUsdPerMillion(figures, baseline, prices), 3),
];

const COST_COLUMNS = [
  'configuration',
  'table calls per transfer',
  'RCU',
  'WCU',
  'calls added',
  'RCU added',
  'WCU added',
  'USD added per million',
];

/** The report's sections: initiation rate and cost, then the cost over a transfer's life. */
export const paymentControlsSections = (
  throughput: readonly ThroughputFigures[],
  life: readonly LifeFigures[],
  prices: { prices: Prices; read: string },
  settings: { transfers: number; concurrency: number; rounds: number; lifeTransfers: number },
): ReportSection[] => {
  const [off] = throughput;
  const lifeOf = (name: string | undefined, outcome: LifeOutcome) =>
    life.find((entry) => entry.configuration === name && entry.outcome === outcome)?.table;
  const offName = CONTROLS_CONFIGURATIONS[0]?.name;
  const lifeOff = { settled: lifeOf(offName, 'settled'), cancelled: lifeOf(offName, 'cancelled') };
  if (off === undefined || lifeOff.settled === undefined || lifeOff.cancelled === undefined)
    throw new Error('payment controls: no figures');
  const baselineOf = (outcome: LifeOutcome) => lifeOff[outcome] as ServiceFigures;
  const byKind = (name: string, figures: ServiceFigures, baseline: ServiceFigures) => {
    const added = addedByKind(figures, baseline);
    return `- ${name}: ${added.length > 0 ? added.join('; ') : 'nothing'}`;
  };
  const rateOf = (name: string | undefined) =>
    throughput.find((entry) => entry.configuration === name)?.run.perSecond ?? 0;
  const [, , limits, , spread] = CONTROLS_CONFIGURATIONS;
  const oneAccountRatio = rateOf(limits?.name) / off.run.perSecond;
  const limitsThroughput = throughput.find((entry) => entry.configuration === limits?.name);
  const spreadRatio = rateOf(spread?.name) / off.run.perSecond;
  const countedLine = (entry: LifeFigures & { counted: CountedByPeriod }) => {
    const expected = entry.outcome === 'settled' ? settings.lifeTransfers : 0;
    const right = entry.counted.day === expected && entry.counted.month === expected;
    return (
      `- ${entry.configuration}, ${entry.outcome}: counted once all were final, day ${entry.counted.day}, month ${entry.counted.month} (${expected} expected)` +
      (right
        ? ''
        : ': **not what was expected** (below it, a transfer was given back more than once, and the limit admits more than it allows)')
    );
  };
  const usd = (figures: ServiceFigures | undefined, baseline: ServiceFigures) =>
    fixed(figures ? addedUsdPerMillion(figures, baseline, prices.prices) : 0, 2);
  return [
    {
      title: `Payment controls: initiation rate and table cost (${settings.transfers} transfers per configuration, concurrency ${settings.concurrency}, ${settings.rounds} alternating rounds, local workflow off)`,
      lines: [
        'One tenant per configuration, set up alike (one client; the same typical USD 1250.75 transfer, from the same account) but for its payment controls, all initiating on one service in turn, the order turning each round. ' +
          "Calls, read units (RCU) and write units (WCU) are the service's own items, per initiation, counted inside dynalite (table-call-counter.mjs, on for every configuration) as DynamoDB on-demand bills them; added is against controls off, priced at docs/aws-prices.json " +
          `(${prices.read}: USD ${fixed(prices.prices.dynamoDbWriteRequestUnit.usd * 1_000_000, 3)} per million write units, ${fixed(prices.prices.dynamoDbReadRequestUnit.usd * 1_000_000, 3)} per million read units).`,
      ],
      table: {
        columns: ['configuration', 'per second', 'x off', 'p50 ms', 'p99 ms', ...COST_COLUMNS.slice(1)],
        rows: throughput.map((entry) => {
          const [, ...cost] = costRow(entry.configuration, entry.table, off.table, prices.prices);
          return [
            entry.configuration,
            fixed(entry.run.perSecond),
            fixed(entry.run.perSecond / off.run.perSecond, 2),
            fixed(entry.run.p50Ms),
            fixed(entry.run.p99Ms),
            ...cost,
          ];
        }),
      },
      notes: [
        'Added per initiation, by item and operation (calls, and their units):',
        '',
        ...throughput.slice(1).map((entry) => byKind(entry.configuration, entry.table, off.table)),
        '',
        "Controls off still reads: the initiation queries the tenant's controls document on every transfer and finds none (dynalite reports no unit for a Query that finds nothing; DynamoDB rounds every read up to 4 KB, so it should bill that Query one read unit like the one that finds the document, and the rule's added read unit is then dynalite's alone). " +
          "Limits write each counter twice (the conditional reservation, then the acknowledgement that clears its mark) and the transfer's own record once more (its hold noted `held`) before the 202, in three round trips (the day's and the month's reservations at once, the record, both acknowledgements at once). " +
          `With the transfers spread over 100 accounts (each with counters of its own) the limits run at **${fixed(spreadRatio, 2)}** x off, against **${fixed(oneAccountRatio, 2)}** from one account: ` +
          (1 - spreadRatio > 0.75 * (1 - oneAccountRatio)
            ? "most of the rate lost is the five writes made before the 202, not one account's counters. "
            : "much of the rate lost is one account's two counters, written by one transfer at a time. ") +
          `Locally the rate follows the table calls an initiation makes, dynalite answering them all on the shared machine (off ${fixed(totalCalls(off.table), 2)}, limits ${fixed(totalCalls(limitsThroughput?.table ?? off.table), 2)}: a ratio of ${fixed(totalCalls(off.table) / totalCalls(limitsThroughput?.table ?? off.table), 2)}); on AWS each added write adds its latency (a few milliseconds) to the 202 rather than bounding the rate. ` +
          "On AWS one item takes at most 1,000 write units a second, so one account's initiations under day and month limits would top out near 500 a second (two writes on each counter), whatever the table's capacity.",
      ],
    },
    {
      title: `Payment controls: table cost over a transfer's life (${settings.lifeTransfers} settled and ${settings.lifeTransfers} cancelled transfers per configuration, workflow on)`,
      lines: [
        "Every service table call from the initiation to the final status, each configuration's tenant (set up as above) alone on a fresh service for each outcome, the workflow on: settled (clearing answers at the first poll; a limit keeps what it counted) and cancelled (from an account the sandbox clearing holds, cancelled once submitted, its first clearing poll put off past the bench: the recall alone ends it Cancelled, and the final publish step gives back what limits counted).",
      ],
      table: {
        columns: ['case', ...COST_COLUMNS],
        rows: life.map((entry) => [
          entry.outcome,
          ...costRow(entry.configuration, entry.table, baselineOf(entry.outcome), prices.prices),
        ]),
      },
      notes: [
        'Added per transfer over its life, by item and operation:',
        '',
        ...life
          .filter((entry) => entry.configuration !== offName)
          .map((entry) =>
            byKind(`${entry.configuration}, ${entry.outcome}`, entry.table, baselineOf(entry.outcome)),
          ),
        '',
        'What the limits count of the account once every transfer is final:',
        '',
        ...life.flatMap((entry) =>
          entry.counted ? [countedLine({ ...entry, counted: entry.counted })] : [],
        ),
        '',
        `Limits add **USD ${usd(lifeOf(limits?.name, 'settled'), baselineOf('settled'))} per million settled transfers** and **USD ${usd(lifeOf(limits?.name, 'cancelled'), baselineOf('cancelled'))} per million cancelled ones** in DynamoDB units (compare the bill section's DynamoDB lines). ` +
          'Settled, a transfer keeps what it counted: nothing is written or read for its limits at its end. ' +
          'Cancelled, it gives back: the record claimed (`releasing`), each counter written twice more (the release, then its acknowledgement) and the record once more (`released`). ' +
          "The record's writes cost more units than calls: the hold it carries (its limits and counters, about 250 bytes) takes its later writes into another kilobyte sooner. " +
          "A rule that does not match costs what reading the document costs. The workflow's clearing polls and the local runtime's timers make the other calls vary by a fraction of a call between configurations.",
      ],
    },
  ];
};
