import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LocalService } from '#local/service-process';
import { minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { cpuMilliseconds, type ServiceProcess, serviceProcesses } from './processes.ts';
import { type BenchClient, fixed, runConcurrently } from './support.ts';

/**
 * What a settled transfer costs the table: calls, read and write capacity units, counted inside
 * dynalite by table-call-counter.mjs (see there how units are computed), and CPU per process.
 */

export interface TableFigures {
  /** Calls by `<owner> <Operation>`, owner `service` or `sandbox clearing`. */
  calls: Record<string, number>;
  readUnits: Record<string, number>;
  writeUnits: Record<string, number>;
  conditionFailures: number;
  /**
   * Calls and units by kind of item (table-call-counter.mjs): `<kind> <Operation>` calls,
   * `<kind> <Operation> units` and `... refused`, `<kind> index <indexName>` index write units.
   */
  byKind?: Record<string, number>;
}

const COUNTER = fileURLToPath(new URL('./table-call-counter.mjs', import.meta.url));

/** A folder for the counts, and the environment that preloads the counter into the service's processes. */
export const tableCallCounting = async (nodeOptions = '') => {
  const directory = await mkdtemp(join(tmpdir(), 'table-calls-'));
  return {
    directory,
    env: {
      NODE_OPTIONS: `${nodeOptions} --import ${COUNTER}`.trim(),
      TABLE_CALL_COUNTS_DIR: directory,
    },
    remove: () => rm(directory, { recursive: true, force: true }),
  };
};

/** Figures of every process of the service so far (only dynalite's process counts). */
export const readTableFigures = async (
  processes: readonly ServiceProcess[],
  directory: string,
): Promise<TableFigures> => {
  for (const { pid } of processes) process.kill(pid, 'SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const total: TableFigures = { calls: {}, readUnits: {}, writeUnits: {}, conditionFailures: 0, byKind: {} };
  for (const { pid } of processes) {
    const text = await readFile(join(directory, `${pid}.json`), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const figures = JSON.parse(text) as TableFigures;
    for (const part of ['calls', 'readUnits', 'writeUnits', 'byKind'] as const) {
      const into = total[part] as Record<string, number>;
      for (const [name, value] of Object.entries(figures[part] ?? {})) into[name] = (into[name] ?? 0) + value;
    }
    total.conditionFailures += figures.conditionFailures;
  }
  return total;
};

const sum = (values: Record<string, number>, owner?: string) =>
  Object.entries(values)
    .filter(([name]) => owner === undefined || name.startsWith(owner))
    .reduce((total, [, value]) => total + value, 0);

const difference = (from: Record<string, number>, to: Record<string, number>, per: number) =>
  Object.fromEntries(
    Object.entries(to)
      .map(([name, value]) => [name, (value - (from[name] ?? 0)) / Math.max(1, per)] as const)
      .filter(([, value]) => value > 0),
  );

/** The figures between two readings, per settled transfer. */
export const perTransfer = (from: TableFigures, to: TableFigures, settled: number): TableFigures => ({
  calls: difference(from.calls, to.calls, settled),
  readUnits: difference(from.readUnits, to.readUnits, settled),
  writeUnits: difference(from.writeUnits, to.writeUnits, settled),
  conditionFailures: (to.conditionFailures - from.conditionFailures) / Math.max(1, settled),
});

export const formatTableFigures = (figures: TableFigures): string[] => {
  const owner = (name: string) =>
    `${name}: ${fixed(sum(figures.calls, name), 2)} calls (${Object.entries(figures.calls)
      .filter(([call]) => call.startsWith(name))
      .map(([call, count]) => `${call.slice(name.length + 1)} ${fixed(count, 2)}`)
      .join(
        ', ',
      )}), ${fixed(figures.writeUnits[name] ?? 0, 2)} write units, ${fixed(figures.readUnits[name] ?? 0, 2)} read units`;
  return [
    owner('service'),
    owner('sandbox clearing'),
    `conditional writes refused: ${fixed(figures.conditionFailures, 2)}`,
  ];
};

const cpuSeconds = async (pid: number): Promise<number> => ((await cpuMilliseconds(pid)) ?? 0) / 1000;

export const cpuOf = async (processes: readonly ServiceProcess[]): Promise<Record<string, number>> =>
  Object.fromEntries(
    await Promise.all(processes.map(async (p) => [p.role, await cpuSeconds(p.pid)] as const)),
  );

const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

/** paymentId -> its final status, from the status events published so far. */
const finalStatuses = async (service: LocalService): Promise<Map<string, string>> => {
  const text = await readFile(join(service.dataDir, 'events.jsonl'), 'utf8').catch(() => '');
  const finals = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const { detail } = JSON.parse(line) as { detail: { paymentId: string; status: string } };
    if (FINAL.has(detail.status)) finals.set(detail.paymentId, detail.status);
  }
  return finals;
};

/**
 * The happy path alone on a quiet service: `count` ordinary transfers initiated a few at a time
 * and settled, every table call from the initiation to the last status event counted, per transfer.
 */
export const benchHappyPathTableCalls = async (
  service: LocalService,
  api: BenchClient,
  directory: string,
  count = 50,
) => {
  const processes = await serviceProcesses(service.pid);
  const calls = await readTableFigures(processes, directory);
  const cpu = await cpuOf(processes);
  const paymentIds: string[] = [];
  await runConcurrently({ requests: count, concurrency: 4 }, async (index) => {
    const reply = await api.post(
      '/v1/payments/credit-transfers',
      minimalCreditTransfer({ debtorAccountId: '001-DDA-01-424242', amount: `${index + 1}.00` }),
    );
    if (reply.status !== 202) throw new Error(`initiation answered ${reply.status}: ${reply.text}`);
    paymentIds.push((JSON.parse(reply.text) as { paymentId: string }).paymentId);
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const finals = await finalStatuses(service);
    const settled = paymentIds.filter((id) => finals.get(id) === 'AcceptedSettlementCompleted').length;
    if (settled === paymentIds.length) break;
    if (Date.now() > deadline) throw new Error(`only ${settled} of ${paymentIds.length} transfers settled`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // The last publish step's bookkeeping follows its event.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const cpuAfter = await cpuOf(processes);
  const figures = perTransfer(calls, await readTableFigures(processes, directory), count);
  return {
    transfers: count,
    figures,
    cpuMs: processes.map(
      (p) => [p.role, (((cpuAfter[p.role] ?? 0) - (cpu[p.role] ?? 0)) * 1000) / count] as const,
    ),
  };
};

export const formatHappyPath = (result: Awaited<ReturnType<typeof benchHappyPathTableCalls>>): string[] => [
  `\n## Table calls per settled transfer (happy path, ${result.transfers} transfers on a quiet service, initiation included)`,
  ...formatTableFigures(result.figures),
  `CPU per settled transfer: ${result.cpuMs.map(([role, ms]) => `${role} ${fixed(ms)} ms`).join(', ')}`,
];
