import {
  billOf,
  type CaseFigures,
  type CaseOptions,
  formatBill,
  idleBill,
  measureCase,
  measureIdleRuns,
  readPrices,
} from './bill.ts';
import { BenchReport } from './report.ts';
import { readStackFigures } from './stack-figures.ts';
import { benchCount, fixed } from './support.ts';

/**
 * `npm run bench -- bill`: the bill per million settled transfers in three cases, each line with
 * its share, and the fixed monthly cost of an idle `prod` stage, against the targets.
 */
const TARGETS = { webhook: 60, polls: 120, idle: 40 };

export const benchBill = async (): Promise<void> => {
  const report = new BenchReport('bench-bill', ['## The AWS bill (`npm run bench -- bill`)']);
  const { prices, read } = await readPrices();
  const stack = readStackFigures();
  const transfers = benchCount('BENCH_BILL_TRANSFERS', process.env.BENCH_BILL_TRANSFERS, 20);
  const logLevel = stack.logLevel;
  const cases: (CaseOptions & { target?: number })[] = [
    { name: 'Happy path (no webhook endpoint, clearing answers at the first poll)', transfers, logLevel },
    {
      name: 'Five clearing polls',
      transfers,
      logLevel,
      // Clearing settles 11 s after submission; polls every 2 s: pending about four times, settled at the fifth.
      env: {
        CLEARING_POLL_INITIAL_SECONDS: '2',
        CLEARING_POLL_MAX_INTERVAL_SECONDS: '2',
        SANDBOX_SETTLEMENT_SECONDS: '11',
      },
      target: TARGETS.polls,
    },
    {
      name: 'Happy path with one webhook endpoint',
      transfers,
      logLevel,
      webhookEndpoint: true,
      target: TARGETS.webhook,
    },
  ];
  const workflow = stack.workflow.map(
    (w) => `${w.type} (log level ${w.logLevel}, tracing ${w.tracing ? 'on' : 'off'})`,
  );
  const intro = [
    `Computed from this run's counts on the local runtime, the \`prod\` stage as synthesized (${stack.stackName}: workflow ${workflow.join(', ')}; ` +
      `X-Ray ${stack.samplingRule ? `sampling rule at ${fixed(stack.samplingRule.fixedRate * 100, 1)} %` : "by X-Ray's default rule"}; ` +
      `${stack.statusEventQueues} queues per status event) and the prices of docs/aws-prices.json (us-east-1, read ${read}). ` +
      `Each transfer (a typical business payment: named parties, the creditor's account, an end-to-end reference and remittance information; test/fixtures/credit-transfers.ts realisticCreditTransfer): one initiation, the workflow to its final status, one status read, one token per ${transfers} transfers; ${transfers} transfers per case, each case on a fresh service. ` +
      "Table units are the service's items only (the sandbox's clearing record is not the bank connector's), as dynalite reports them with ReturnConsumedCapacity plus the index writes it does not report (table-call-counter.mjs). " +
      "Lambda duration is each handler's local wall time rounded up to the millisecond (the fastest tenth's bound, for every invocation: locally invocations share a process and a CPU), at the function's configured memory and architecture: an indication, since a Lambda's calls to DynamoDB take longer than dynalite's on a socket and its CPU share depends on its memory.",
  ];
  const measured: { figures: CaseFigures; target?: number }[] = [];
  for (const options of cases) measured.push({ figures: await measureCase(options), target: options.target });

  let first = true;
  for (const { figures, target } of measured) {
    const bill = billOf(figures, stack, prices);
    const formatted = formatBill(figures, bill);
    const perMillion = bill.total * 1_000_000;
    report.section({
      title: formatted.title,
      ...(first && { lines: intro }),
      table: { columns: ['item', 'per transfer', 'USD per million', 'share'], rows: formatted.rows },
      notes: [
        ...formatted.notes,
        ...(target === undefined
          ? []
          : [`Target: at most USD ${target} per million: **${perMillion <= target ? 'met' : 'not met'}**.`]),
      ],
    });
    first = false;
  }

  const runs = await measureIdleRuns();
  const idle = idleBill(stack, prices, {
    reconcilerBilledMs: runs.reconcilerMs,
    deliverRunMs: runs.deliverMs,
  });
  const idleTotal = idle.reduce((sum, line) => sum + line.usd, 0);
  report.section({
    title: `Idle prod stage: USD ${fixed(idleTotal, 2)} a month before any payment`,
    lines: [
      "Every resource that costs by the month or runs on a schedule, read from the synthesized template; each scheduled function's run is measured on an idle local service " +
        `(reconciler ${fixed(runs.reconcilerMs, 0)} ms, webhook retry sender ${fixed(runs.deliverMs, 0)} ms a run).`,
    ],
    table: {
      columns: ['item', 'counted', 'USD a month', 'share'],
      rows: [
        ...idle.map((line) => [
          line.item,
          line.counted,
          fixed(line.usd, 2),
          `${fixed((line.usd / idleTotal) * 100, 1)} %`,
        ]),
        ['**total**', '', `**${fixed(idleTotal, 2)}**`, '100 %'],
      ],
    },
    notes: [
      `Target: at most USD ${TARGETS.idle} a month: **${idleTotal <= TARGETS.idle ? 'met' : 'not met'}**.`,
    ],
  });
  await report.write();
};
