import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { LocalService } from '#local/service-process';
import type { ExecutionSummary } from '#local/workflow-runner';
import { minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { readPrices } from './bill.ts';
import { type BenchClient, fixed, runConcurrently } from './support.ts';

/**
 * Lifecycle figures on the local runtime: states entered per transfer and the Standard state
 * transitions among them (what Step Functions bills per transition; the Express fast path bills by
 * start and duration, which `npm run bench -- bill` prices), counted from the runner's execution
 * history, and transfers settled per second with many in flight, from the status events.
 */

/** Step Functions Standard's price per state transition, from the one price file. */
const usdPerTransition = async () => (await readPrices()).prices.stepFunctionsStandardTransition.usd;

const jsonLines = async <T>(file: string): Promise<T[]> =>
  (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);

interface StatusEventLine {
  detail: { paymentId: string; status: string; date: string; sequence: number };
}

const initiateAll = async (api: BenchClient, count: number, concurrency: number, debtorAccountId: string) => {
  const paymentIds: string[] = [];
  const figures = await runConcurrently({ requests: count, concurrency }, async (index) => {
    const reply = await api.post(
      '/v1/payments/credit-transfers',
      minimalCreditTransfer({ debtorAccountId, amount: `${index + 1}.00` }),
    );
    if (reply.status !== 202) throw new Error(`initiation answered ${reply.status}: ${reply.text}`);
    paymentIds.push((JSON.parse(reply.text) as { paymentId: string }).paymentId);
  });
  return { paymentIds, figures };
};

/** Waits until every transfer has published a final status event; returns those events by paymentId. */
const finalEvents = async (service: LocalService, paymentIds: readonly string[], timeoutMs: number) => {
  const wanted = new Set(paymentIds);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await jsonLines<StatusEventLine>(join(service.dataDir, 'events.jsonl'));
    const byPayment = new Map<string, StatusEventLine['detail'][]>();
    for (const { detail } of events) {
      if (!wanted.has(detail.paymentId)) continue;
      byPayment.set(detail.paymentId, [...(byPayment.get(detail.paymentId) ?? []), detail]);
    }
    const finished = [...byPayment.values()].filter((details) =>
      details.some((detail) =>
        ['AcceptedSettlementCompleted', 'Rejected', 'Cancelled'].includes(detail.status),
      ),
    );
    if (finished.length === wanted.size) return byPayment;
    if (Date.now() > deadline)
      throw new Error(`only ${finished.length} of ${wanted.size} transfers finished`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

const percentile = (sorted: readonly number[], fraction: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;

export const benchLifecycleTransitions = async (service: LocalService, api: BenchClient, count = 20) => {
  const { paymentIds } = await initiateAll(api, count, 4, '001-DDA-01-123456');
  const byPayment = await finalEvents(service, paymentIds, 60_000);
  const latencies = [...byPayment.values()]
    .map((details) => {
      const received = details.find((detail) => detail.sequence === 0);
      const settled = details.find((detail) => detail.status === 'AcceptedSettlementCompleted');
      return received && settled ? Date.parse(settled.date) - Date.parse(received.date) : Number.NaN;
    })
    .sort((a, b) => a - b);
  // The execution summary is written right after the last state; give the last ones a moment.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const executions = await jsonLines<ExecutionSummary>(join(service.dataDir, 'executions.jsonl'));
  const countedPerTransfer = (type?: ExecutionSummary['type']) =>
    paymentIds
      .map((paymentId) =>
        executions
          .filter((execution) => execution.paymentId === paymentId)
          .filter((execution) => type === undefined || execution.type === type)
          .reduce((sum, execution) => sum + execution.transitions, 0),
      )
      .sort((a, b) => a - b);
  const perTransfer = countedPerTransfer();
  const median = percentile(perTransfer, 0.5);
  const standard = percentile(countedPerTransfer('STANDARD'), 0.5);
  return {
    transfers: count,
    min: perTransfer[0] ?? 0,
    median,
    max: perTransfer.at(-1) ?? 0,
    standardMedian: standard,
    usdPerMillionTransfers: standard * (await usdPerTransition()) * 1_000_000,
    p50Ms: percentile(latencies, 0.5),
  };
};

export const benchLifecycleThroughput = async (
  service: LocalService,
  api: BenchClient,
  options: { transfers: number; concurrency: number },
) => {
  const started = performance.now();
  const startedAt = Date.now();
  const { paymentIds, figures } = await initiateAll(
    api,
    options.transfers,
    options.concurrency,
    '001-DDA-01-654321',
  );
  const byPayment = await finalEvents(service, paymentIds, 300_000);
  const seconds = (performance.now() - started) / 1000;
  const latencies: number[] = [];
  let lastSettled = startedAt;
  for (const details of byPayment.values()) {
    const received = details.find((detail) => detail.sequence === 0);
    const settled = details.find((detail) => detail.status === 'AcceptedSettlementCompleted');
    if (received && settled) {
      latencies.push(Date.parse(settled.date) - Date.parse(received.date));
      lastSettled = Math.max(lastSettled, Date.parse(settled.date));
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    transfers: options.transfers,
    settled: latencies.length,
    seconds,
    settledPerSecond: latencies.length / ((lastSettled - startedAt) / 1000),
    initiationsPerSecond: figures.perSecond,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
  };
};

export const formatLifecycleReport = (
  transitions: Awaited<ReturnType<typeof benchLifecycleTransitions>>,
  throughput: Awaited<ReturnType<typeof benchLifecycleThroughput>>,
): string[] => [
  `\n## Lifecycle: state transitions per transfer (happy path, ${transitions.transfers} transfers, counted from executions.jsonl)`,
  `states entered per settled transfer: median ${transitions.median} (min ${transitions.min}, max ${transitions.max}), of which Standard transitions ${transitions.standardMedian}` +
    ` -> USD ${fixed(transitions.usdPerMillionTransfers, 0)} per million transfers in Standard transitions at docs/aws-prices.json's price (the Express fast path: npm run bench -- bill);` +
    ` Received -> Completed p50 ${fixed(transitions.p50Ms, 0)} ms unloaded`,
  `\n## Lifecycle: settlement throughput (${throughput.transfers} transfers initiated at concurrency, settlement delay 1 s)`,
  `settled ${throughput.settled} of ${throughput.transfers} in ${fixed(throughput.seconds)} s: ${fixed(throughput.settledPerSecond)} settled/s` +
    ` (initiations ${fixed(throughput.initiationsPerSecond)}/s; Received -> Completed p50 ${fixed(throughput.p50Ms, 0)} ms, p99 ${fixed(throughput.p99Ms, 0)} ms)`,
];
