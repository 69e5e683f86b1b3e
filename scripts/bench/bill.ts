import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { FunctionFigures } from '#local/invocation-meter';
import { type LocalService, startLocalService } from '#local/service-process';
import type { ExecutionSummary } from '#local/workflow-runner';
import { realisticCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { serviceProcesses } from './processes.ts';
import type { StackFigures, StackFunction } from './stack-figures.ts';
import { type BenchClient, benchClient, fixed, requestToken, runConcurrently } from './support.ts';
import { readTableFigures, type TableFigures, tableCallCounting } from './table-figures.ts';

/**
 * The AWS bill of a million settled transfers, computed from what one run of the local runtime
 * counts (state transitions, invocations and their billed milliseconds, table capacity units as
 * DynamoDB reports them, events, log bytes), the stack definition of the `prod` stage (memory,
 * architecture, log levels, tracing, queues) and one price file, docs/aws-prices.json.
 */

const PRICES_FILE = fileURLToPath(new URL('../../docs/aws-prices.json', import.meta.url));
type PriceName =
  | 'stepFunctionsStandardTransition'
  | 'stepFunctionsExpressRequest'
  | 'stepFunctionsExpressGbSecond'
  | 'lambdaRequest'
  | 'lambdaArmGbSecond'
  | 'lambdaX86GbSecond'
  | 'lambdaArmProvisionedGbSecond'
  | 'dynamoDbWriteRequestUnit'
  | 'dynamoDbReadRequestUnit'
  | 'apiGatewayRestRequest'
  | 'eventBridgeCustomEvent'
  | 'schedulerInvocation'
  | 'sqsRequest'
  | 'kmsKeyMonth'
  | 'kmsAsymmetricRequest'
  | 'xrayTraceRecorded'
  | 'xrayDefaultReservoirPerSecond'
  | 'xrayDefaultFixedRate'
  | 'cloudWatchLogsIngestedGb'
  | 'cloudWatchAlarmMetricMonth'
  | 'cloudWatchDashboardMonth'
  | 'wafWebAclMonth'
  | 'wafRuleMonth'
  | 'wafRequest'
  | 'secretMonth';
export type Prices = Record<PriceName, { usd: number; value?: number }>;

export const readPrices = async (): Promise<{ prices: Prices; read: string }> => {
  const file = JSON.parse(await readFile(PRICES_FILE, 'utf8')) as { read: string; prices: Prices };
  return file;
};

const MONTH_SECONDS = 30 * 24 * 3600;
const MILLION = 1_000_000;
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

/** A function's figures per transfer. */
export interface MeasuredFunction {
  invocations: number;
  billedMs: number;
  typicalMs: number;
  logBytes: number;
}

/**
 * The duration taken for every invocation of a function: the fastest tenth's bound. Locally every
 * invocation shares one process (and here a shared CPU) with the others in flight, so most wait for
 * the CPU at some point, which a Lambda invocation, alone in its environment, does not.
 */
const typical = (values: readonly number[]): number => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) * 0.1)] ?? 0;
};

/** One measured case: what a transfer costs in counts, per transfer. */
export interface CaseFigures {
  name: string;
  transfers: number;
  apiRequests: number;
  tokensIssued: number;
  /** Both machines' executions, their states and retries (what the logs count). */
  transitions: number;
  executions: number;
  /** The fast path's (EXPRESS): executions started, and their duration in Express's 100 ms steps. */
  expressExecutions: number;
  expressBilledSeconds: number;
  /** Long waits' (STANDARD): executions and the state transitions Step Functions bills. */
  standardExecutions: number;
  standardTransitions: number;
  taskStates: number;
  retries: number;
  failedExecutions: number;
  polls: number;
  events: number;
  deliveries: number;
  table: TableFigures;
  functions: Record<string, MeasuredFunction>;
  executionNameLength: number;
}

const jsonLines = async <T>(file: string): Promise<T[]> =>
  (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);

/** Invocation figures of every process so far (written on the SIGUSR2 readTableFigures sends). */
const readInvocations = async (directory: string): Promise<Record<string, FunctionFigures>> => {
  const total: Record<string, FunctionFigures> = {};
  for (const name of await readdir(directory)) {
    if (!name.startsWith('invocations-')) continue;
    const figures = JSON.parse(await readFile(join(directory, name), 'utf8')) as Record<
      string,
      FunctionFigures
    >;
    for (const [entry, f] of Object.entries(figures)) {
      const sum = total[entry] ?? { invocations: 0, billedMs: 0, logBytes: 0, durations: [], added: [] };
      total[entry] = sum;
      sum.invocations += f.invocations;
      sum.billedMs += f.billedMs;
      sum.logBytes += f.logBytes;
      sum.durations.push(...f.durations);
      sum.added.push(...f.added);
    }
  }
  return total;
};

const perTransferOf = (
  from: Record<string, number>,
  to: Record<string, number>,
  count: number,
): Record<string, number> =>
  Object.fromEntries(
    Object.entries(to)
      .map(([name, value]) => [name, (value - (from[name] ?? 0)) / count] as const)
      .filter(([, value]) => value > 0),
  );

export interface CaseOptions {
  name: string;
  /** The functions' log level on the stage (POWERTOOLS_LOG_LEVEL), so their log lines are the stage's. */
  logLevel: string;
  transfers: number;
  /** Settings of the local service for this case (clearing's delay, the polling interval). */
  env?: Record<string, string>;
  /** Register one webhook endpoint (a receiver on 127.0.0.1 answering 204) before the transfers. */
  webhookEndpoint?: boolean;
}

/**
 * On a fresh service with the table counter and the invocation meter on: `transfers` transfers,
 * each initiated, settled, its status read once, and (with an endpoint) every event delivered;
 * the counts between the first initiation and the last delivery, per transfer.
 */
export const measureCase = async (options: CaseOptions): Promise<CaseFigures> => {
  const counting = await tableCallCounting(process.env.NODE_OPTIONS);
  const service = await startLocalService({
    env: {
      ...counting.env,
      INVOCATION_METER_DIR: counting.directory,
      // No reconciler run in the measured window: its cost is the idle stage's.
      RECONCILE_INTERVAL_SECONDS: '3600',
      POWERTOOLS_LOG_LEVEL: options.logLevel,
      ...options.env,
    },
  });
  const receipts = new Map<string, number>();
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.writeHead(204).end();
      const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
      receipts.set(id, (receipts.get(id) ?? 0) + 1);
    });
  });
  try {
    const processes = await serviceProcesses(service.pid);
    const api: BenchClient = benchClient(service.baseUrl, await requestToken(service.baseUrl));
    if (options.webhookEndpoint) {
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const reply = await api.post('/v1/webhook-endpoints', {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bill`,
        eventTypes: ['credit-transfer.status-changed'],
      });
      if (reply.status !== 201) throw new Error(`registration answered ${reply.status}: ${reply.text}`);
    }
    const tableBefore = await readTableFigures(processes, counting.directory);
    const functionsBefore = await readInvocations(counting.directory);
    const paymentIds: string[] = [];
    let apiRequests = 0;
    await runConcurrently({ requests: options.transfers, concurrency: 4 }, async (index) => {
      const reply = await api.post(
        '/v1/payments/credit-transfers',
        // A typical business payment (named parties, the creditor's account, remittance
        // information), not a minimal one: the payment item's size decides its write units.
        realisticCreditTransfer({ debtorAccountId: '001-DDA-01-424242', amount: `${index + 1}.00` }),
        { 'Idempotency-Key': randomUUID() },
      );
      apiRequests++;
      if (reply.status !== 202) throw new Error(`initiation answered ${reply.status}: ${reply.text}`);
      paymentIds.push((JSON.parse(reply.text) as { paymentId: string }).paymentId);
    });
    const wanted = new Set(paymentIds);
    const eventsFile = join(service.dataDir, 'events.jsonl');
    type EventLine = { detail: { paymentId: string; status: string; eventId?: string }; id?: string };
    const deadline = Date.now() + 300_000;
    let events: EventLine[] = [];
    for (;;) {
      events = (await jsonLines<EventLine>(eventsFile)).filter((line) => wanted.has(line.detail.paymentId));
      const settled = new Set(
        events.filter((e) => FINAL.has(e.detail.status)).map((e) => e.detail.paymentId),
      );
      const delivered = options.webhookEndpoint ? receipts.size >= events.length : true;
      if (settled.size === wanted.size && delivered) break;
      if (Date.now() > deadline)
        throw new Error(`${options.name}: only ${settled.size} of ${wanted.size} settled`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // One status read per transfer, once it is final (what a client polling once would pay).
    for (const paymentId of paymentIds) {
      const reply = await api.get(`/v1/payments/credit-transfers/${paymentId}/status`);
      apiRequests++;
      if (reply.status !== 200) throw new Error(`status read answered ${reply.status}`);
    }
    // The last publish step's bookkeeping and the last attempt's record follow the event.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const tableAfter = await readTableFigures(processes, counting.directory);
    const functionsAfter = await readInvocations(counting.directory);
    const executions = (await jsonLines<ExecutionSummary>(join(service.dataDir, 'executions.jsonl'))).filter(
      (e) => wanted.has(e.paymentId),
    );
    const count = paymentIds.length;
    const express = executions.filter((e) => e.type === 'EXPRESS');
    const standard = executions.filter((e) => e.type === 'STANDARD');
    const sumOf = (pick: (e: ExecutionSummary) => number) => executions.reduce((sum, e) => sum + pick(e), 0);
    const functions: Record<string, MeasuredFunction> = {};
    for (const [entry, after] of Object.entries(functionsAfter)) {
      const before = functionsBefore[entry] ?? {
        invocations: 0,
        billedMs: 0,
        logBytes: 0,
        durations: [],
        added: [],
      };
      const durations = after.durations.slice(before.durations.length);
      const added = after.added.slice(before.added.length);
      const billedMs = typical(durations) * durations.length + typical(added) * added.length;
      const delta = {
        invocations: (after.invocations - before.invocations) / count,
        billedMs: billedMs / count,
        typicalMs: typical(durations),
        logBytes: (after.logBytes - before.logBytes) / count,
      };
      if (delta.invocations > 0 || delta.billedMs > 0) functions[entry] = delta;
    }
    const pollEntry = 'lambdas/workflow/poll-clearing.ts';
    return {
      name: options.name,
      transfers: count,
      // The token the run asked for, spread over its transfers.
      apiRequests: apiRequests / count + 1 / count,
      tokensIssued: 1 / count,
      transitions: sumOf((e) => e.transitions) / count,
      executions: executions.length / count,
      expressExecutions: express.length / count,
      // Billed in 100 ms steps from start to end, waits included.
      expressBilledSeconds:
        express.reduce(
          (sum, e) => sum + Math.ceil((Date.parse(e.stoppedAt) - Date.parse(e.startedAt)) / 100) / 10,
          0,
        ) / count,
      standardExecutions: standard.length / count,
      standardTransitions: standard.reduce((sum, e) => sum + e.transitions, 0) / count,
      taskStates: sumOf((e) => e.taskStates) / count,
      retries: sumOf((e) => e.retries) / count,
      failedExecutions: executions.filter((e) => e.status !== 'SUCCEEDED').length / count,
      polls: functions[pollEntry]?.invocations ?? 0,
      events: events.length / count,
      deliveries: [...receipts.values()].reduce((sum, n) => sum + n, 0) / count,
      table: {
        calls: perTransferOf(tableBefore.calls, tableAfter.calls, count),
        readUnits: perTransferOf(tableBefore.readUnits, tableAfter.readUnits, count),
        writeUnits: perTransferOf(tableBefore.writeUnits, tableAfter.writeUnits, count),
        conditionFailures: (tableAfter.conditionFailures - tableBefore.conditionFailures) / count,
        byKind: perTransferOf(tableBefore.byKind ?? {}, tableAfter.byKind ?? {}, count),
      },
      functions,
      executionNameLength: executions[0]?.name.length ?? 40,
    };
  } finally {
    receiver.close();
    await service.stop();
    await counting.remove();
  }
};

/**
 * The scheduled functions' runs on an idle stage (nothing due), on a fresh service: the reconciler's
 * as the local runtime runs it every second, and the webhook retry sender's handler run here
 * against the same table, billed milliseconds per run.
 */
export const measureIdleRuns = async (seconds = 6): Promise<{ reconcilerMs: number; deliverMs: number }> => {
  const counting = await tableCallCounting(process.env.NODE_OPTIONS);
  const service: LocalService = await startLocalService({
    env: { ...counting.env, INVOCATION_METER_DIR: counting.directory, RECONCILE_INTERVAL_SECONDS: '1' },
  });
  try {
    const processes = await serviceProcesses(service.pid);
    // The start-up run (over everything) first; then the ordinary runs of an idle stage.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await readTableFigures(processes, counting.directory);
    const before = (await readInvocations(counting.directory))[RECONCILER] ?? {
      invocations: 0,
      billedMs: 0,
      logBytes: 0,
      durations: [],
      added: [],
    };
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    await readTableFigures(processes, counting.directory);
    const after = (await readInvocations(counting.directory))[RECONCILER];
    const runs = (after?.invocations ?? 0) - before.invocations;
    if (!after || runs <= 0) throw new Error('the reconciler did not run');
    Object.assign(process.env, { DYNAMODB_SOCKET: service.tableSocket, TABLE_NAME: 'credit-transfers' });
    const { deliverDueWebhooks } = await import('../../lambdas/webhooks/deliver-due-webhooks.ts');
    await deliverDueWebhooks(); // the container's first run makes its clients
    let deliverMs = 0;
    const deliverRuns = 5;
    for (let run = 0; run < deliverRuns; run++) {
      const started = performance.now();
      await deliverDueWebhooks();
      deliverMs += Math.ceil(performance.now() - started);
    }
    return {
      reconcilerMs: typical(after.durations.slice(before.durations.length)),
      deliverMs: deliverMs / deliverRuns,
    };
  } finally {
    await service.stop();
    await counting.remove();
  }
};

const RECONCILER = 'lambdas/workflow/reconcile.ts';
const INGEST = 'lambdas/webhooks/ingest-status-events.ts';

/** Lambda's own lines per invocation (START, END, REPORT with its X-Ray line), as its text format writes them. */
const platformLineBytes = (fn: StackFunction): number => {
  const id = randomUUID();
  return Buffer.byteLength(
    `START RequestId: ${id} Version: $LATEST\n` +
      `END RequestId: ${id}\n` +
      `REPORT RequestId: ${id}\tDuration: 12.34 ms\tBilled Duration: 13 ms\tMemory Size: ${fn.memoryMb} MB\tMax Memory Used: 101 MB\t\n` +
      (fn.tracing === 'Active'
        ? `XRAY TraceId: 1-6746548a-3c0d5e1f8a9b2c3d4e5f6a7b\tSegmentId: 1a2b3c4d5e6f7a8b\tSampled: true\t\n`
        : ''),
  );
};

/** One execution history event as Step Functions logs it without execution data. */
const workflowLogRecordBytes = (stackName: string, executionNameLength: number): number =>
  Buffer.byteLength(
    JSON.stringify({
      id: '12',
      type: 'TaskStateEntered',
      details: { name: 'ValidateCheckAndSubmit' },
      previous_event_id: '11',
      event_timestamp: '1764198114123',
      execution_arn: `arn:aws:states:us-east-1:123456789012:execution:${stackName}-LifecycleStateMachineA1B2C3D4-AbCdEfGhIjKl:${'x'.repeat(executionNameLength)}`,
      redrive_count: '0',
    }),
  );

/** One WAF log record of an allowed request, with the web ACL's rules evaluated and the request's headers. */
const wafLogRecordBytes = (rules: number): number =>
  Buffer.byteLength(
    JSON.stringify({
      timestamp: 1764198114123,
      formatVersion: 1,
      webaclId:
        'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/CreditTransfers-prod/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d',
      terminatingRuleId: 'Default_Action',
      terminatingRuleType: 'REGULAR',
      action: 'ALLOW',
      terminatingRuleMatchDetails: [],
      httpSourceName: 'APIGW',
      httpSourceId: '123456789012:abcdef1234:live',
      ruleGroupList: Array.from({ length: rules }, (_, index) => ({
        ruleGroupId: `AWS#AWSManagedRulesRuleSet${index}`,
        terminatingRule: null,
        nonTerminatingMatchingRules: [],
        excludedRules: null,
        customerConfig: null,
      })),
      rateBasedRuleList: [],
      nonTerminatingMatchingRules: [],
      requestHeadersInserted: null,
      responseCodeSent: null,
      httpRequest: {
        clientIp: '203.0.113.17',
        country: 'DE',
        headers: [
          { name: 'host', value: 'api.bank.example' },
          { name: 'authorization', value: 'REDACTED' },
          { name: 'content-type', value: 'application/json' },
          { name: 'content-length', value: '412' },
          { name: 'idempotency-key', value: randomUUID() },
          { name: 'user-agent', value: 'credit-transfers-client/0.1.0 node/24' },
          { name: 'accept', value: 'application/json' },
        ],
        uri: '/v1/payments/credit-transfers',
        args: '',
        httpVersion: 'HTTP/1.1',
        httpMethod: 'POST',
        requestId: randomUUID(),
        fragment: '',
        scheme: 'https',
        host: 'api.bank.example',
      },
      labels: [],
      ja3Fingerprint: '0123456789abcdef0123456789abcdef',
    }),
  );

/** One access log line in the stage's format, each field a value of the usual length. */
const accessLogLineBytes = (format: string | undefined): number => {
  if (format === undefined) return 0;
  const sample: Record<string, string> = {
    requestId: randomUUID(),
    extendedRequestId: 'AbCdEfGhIjKlMnO=',
    requestTime: '26/Nov/2026:23:01:54 +0000',
    'identity.sourceIp': '203.0.113.17',
    'identity.userAgent': 'credit-transfers-client/0.1.0 node/24',
    httpMethod: 'POST',
    resourcePath: '/v1/payments/credit-transfers/{paymentId}/status',
    path: '/v1/payments/credit-transfers/0f8fad5b-d9cb-469f-a165-70867728950e/status',
    protocol: 'HTTP/1.1',
    status: '202',
    responseLength: '512',
  };
  return Buffer.byteLength(
    `${format.replace(/\$context\.([\w.]+)/g, (_, name: string) => sample[name] ?? 'x'.repeat(16))}\n`,
  );
};

export interface BillLine {
  item: string;
  counted: string;
  usd: number;
}

export interface Bill {
  lines: BillLine[];
  total: number;
  lambda: ({ entry: string; memoryMb: number; usd: number } & MeasuredFunction)[];
}

/** Price of one transfer of the case, line by line; per million transfers is times a million. */
export const billOf = (figures: CaseFigures, stack: StackFigures, prices: Prices): Bill => {
  const p = (name: PriceName) => prices[name].usd;
  const lines: BillLine[] = [];
  // Every transfer starts on the fast path (EXPRESS: requests, and duration at 64 MB, the
  // smallest chunk, which its small state keeps to); only long waits run on the STANDARD machine.
  const express = stack.workflow.find((machine) => machine.type === 'EXPRESS');
  const standard = stack.workflow.find((machine) => machine.type === 'STANDARD');
  if (express) {
    lines.push({
      item: 'Step Functions Express',
      counted: `${fixed(figures.expressExecutions, 2)} executions, ${fixed(figures.expressBilledSeconds, 1)} s billed`,
      usd:
        figures.expressExecutions * p('stepFunctionsExpressRequest') +
        figures.expressBilledSeconds * (64 / 1024) * p('stepFunctionsExpressGbSecond'),
    });
  }
  lines.push({
    item: 'Step Functions Standard',
    counted: `${fixed(figures.standardTransitions, 2)} state transitions (${fixed(figures.standardExecutions, 2)} executions)`,
    usd: figures.standardTransitions * p('stepFunctionsStandardTransition'),
  });
  const workflow = express ?? standard;

  const lambda = Object.entries(figures.functions).map(([entry, f]) => {
    const fn = stack.functions.get(entry);
    if (!fn) throw new Error(`${entry}: no function of the stack runs it`);
    const gbSeconds = (f.billedMs / 1000) * (fn.memoryMb / 1024);
    const usd =
      f.invocations * p('lambdaRequest') +
      gbSeconds * p(fn.architecture === 'arm64' ? 'lambdaArmGbSecond' : 'lambdaX86GbSecond');
    return { entry, memoryMb: fn.memoryMb, ...f, usd };
  });
  const invocations = lambda.reduce((sum, f) => sum + f.invocations, 0);
  lines.push({
    item: 'Lambda',
    counted: `${fixed(invocations, 2)} invocations, ${fixed(
      lambda.reduce((sum, f) => sum + (f.billedMs / 1000) * (f.memoryMb / 1024), 0),
      3,
    )} GB-s`,
    usd: lambda.reduce((sum, f) => sum + f.usd, 0),
  });

  // The service's own items only: the sandbox keeps clearing's record in the table, the bank's connector does not.
  const table = figures.table;
  const writeUnits = table.writeUnits.service ?? 0;
  const readUnits = table.readUnits.service ?? 0;
  const calls = Object.entries(table.calls)
    .filter(([name]) => name.startsWith('service '))
    .reduce((sum, [, n]) => sum + n, 0);
  lines.push({
    item: 'DynamoDB writes',
    counted: `${fixed(writeUnits, 1)} write units (${fixed(calls, 1)} calls in all)`,
    usd: writeUnits * p('dynamoDbWriteRequestUnit'),
  });
  lines.push({
    item: 'DynamoDB reads',
    counted: `${fixed(readUnits, 1)} read units`,
    usd: readUnits * p('dynamoDbReadRequestUnit'),
  });
  lines.push({
    item: 'API Gateway',
    counted: `${fixed(figures.apiRequests, 2)} requests`,
    usd: figures.apiRequests * p('apiGatewayRestRequest'),
  });
  if (stack.webAcl) {
    lines.push({
      item: 'WAF requests',
      counted: `${fixed(figures.apiRequests, 2)} requests inspected`,
      usd: figures.apiRequests * p('wafRequest'),
    });
  }
  lines.push({
    item: 'EventBridge',
    counted: `${fixed(figures.events, 1)} events`,
    usd: figures.events * p('eventBridgeCustomEvent'),
  });
  // Each status event: one SendMessage per queue its rules fill, one receive and one delete per queue a function reads.
  const queueRequests = figures.events * (stack.statusEventQueues + 2 * stack.statusEventReaders);
  lines.push({
    item: 'SQS',
    counted: `${fixed(queueRequests, 1)} requests (${stack.statusEventQueues} queues, ${stack.statusEventReaders} read here)`,
    usd: queueRequests * p('sqsRequest'),
  });
  lines.push({
    item: 'KMS',
    counted: `${fixed(figures.tokensIssued, 3)} token signatures`,
    usd: figures.tokensIssued * p('kmsAsymmetricRequest'),
  });

  // Trace roots: each API request (API Gateway starts the trace), each execution (its tasks join it),
  // both sampled by the stage's rule when it has one; and each invocation of an actively traced
  // function nothing traced started (the queue's reader), which Lambda samples by its own fixed
  // rule (the first each second, 5 % beyond), whatever the rules say.
  const defaultShare = (roots: number) => {
    const perSecond = (roots * MILLION) / MONTH_SECONDS;
    const reservoir = prices.xrayDefaultReservoirPerSecond.value ?? 1;
    const rate = prices.xrayDefaultFixedRate.value ?? 0.05;
    return perSecond === 0
      ? 0
      : (Math.min(perSecond, reservoir) + rate * Math.max(0, perSecond - reservoir)) / perSecond;
  };
  // An execution of long waits, started by the fast path, joins its trace.
  const ruled =
    (stack.apiTracing ? figures.apiRequests : 0) + (workflow?.tracing ? figures.expressExecutions : 0);
  const ingest =
    stack.functions.get(INGEST)?.tracing === 'Active' ? (figures.functions[INGEST]?.invocations ?? 0) : 0;
  const ruledShare = stack.samplingRule ? stack.samplingRule.fixedRate : defaultShare(ruled);
  const roots = ruled + ingest;
  const recorded = ruled * ruledShare + ingest * defaultShare(ingest);
  const sampling = `${stack.samplingRule ? 'sampling rule' : 'default rule'} ${fixed(ruledShare * 100, 1)} % of ${fixed(ruled, 1)}, Lambda's own ${fixed(defaultShare(ingest) * 100, 0)} % of ${fixed(ingest, 1)} at a million a month`;
  lines.push({
    item: 'X-Ray',
    counted: `${fixed(recorded, 2)} traces (${fixed(roots, 1)} started: ${sampling})`,
    usd: recorded * p('xrayTraceRecorded'),
  });

  const functionLogBytes = lambda.reduce((sum, f) => {
    const fn = stack.functions.get(f.entry);
    return sum + f.logBytes + (fn?.platformLines ? f.invocations * platformLineBytes(fn) : 0);
  }, 0);
  const recordBytes = workflowLogRecordBytes(stack.stackName, figures.executionNameLength);
  // History events per execution: started and ended, each state entered and exited, each task's
  // scheduled, started and succeeded; at ERROR only the failures.
  const historyEvents =
    workflow?.logLevel === 'ALL'
      ? figures.executions * 2 + figures.transitions * 2 + figures.taskStates * 3
      : workflow?.logLevel === 'ERROR' || workflow?.logLevel === 'FATAL'
        ? figures.retries + figures.failedExecutions
        : 0;
  const workflowLogBytes = historyEvents * recordBytes;
  const accessBytes = figures.apiRequests * accessLogLineBytes(stack.accessLogFormat);
  const wafBytes = stack.webAcl?.logsEveryRequest
    ? figures.apiRequests * wafLogRecordBytes(stack.webAcl.rules)
    : 0;
  const logBytes = functionLogBytes + workflowLogBytes + accessBytes + wafBytes;
  lines.push({
    item: 'CloudWatch Logs',
    counted: `${fixed(logBytes / 1024, 1)} KB (functions ${fixed(functionLogBytes / 1024, 1)}, workflow ${fixed(workflowLogBytes / 1024, 1)} at ${workflow?.logLevel ?? 'OFF'}, access ${fixed(accessBytes / 1024, 1)}, WAF ${fixed(wafBytes / 1024, 1)})`,
    usd: (logBytes / 1024 ** 3) * p('cloudWatchLogsIngestedGb'),
  });

  return { lines, total: lines.reduce((sum, line) => sum + line.usd, 0), lambda };
};

export interface IdleLine {
  item: string;
  counted: string;
  usd: number;
}

/** What the stage costs a month with no payment made, line by line. */
export const idleBill = (
  stack: StackFigures,
  prices: Prices,
  idle: { reconcilerBilledMs: number; deliverRunMs: number },
): IdleLine[] => {
  const p = (name: PriceName) => prices[name].usd;
  const alarmMetrics = stack.alarms.reduce((sum, alarm) => sum + alarm.metrics, 0);
  const lines: IdleLine[] = [
    {
      item: 'CloudWatch alarms',
      counted: `${stack.alarms.length} alarms, ${alarmMetrics} metrics`,
      usd: alarmMetrics * p('cloudWatchAlarmMetricMonth'),
    },
    {
      item: 'CloudWatch dashboards',
      counted: `${stack.dashboards}`,
      usd: stack.dashboards * p('cloudWatchDashboardMonth'),
    },
    { item: 'KMS keys', counted: `${stack.kmsKeys}`, usd: stack.kmsKeys * p('kmsKeyMonth') },
    { item: 'Secrets Manager', counted: `${stack.secrets} secrets`, usd: stack.secrets * p('secretMonth') },
  ];
  if (stack.webAcl) {
    lines.push({
      item: 'WAF web ACL',
      counted: `1 web ACL, ${stack.webAcl.rules} rules`,
      usd: p('wafWebAclMonth') + stack.webAcl.rules * p('wafRuleMonth'),
    });
  }
  for (const schedule of stack.schedules) {
    const fn = schedule.target ? stack.functions.get(schedule.target) : undefined;
    const runMs =
      schedule.target === RECONCILER
        ? idle.reconcilerBilledMs
        : schedule.target === 'lambdas/webhooks/deliver-due-webhooks.ts'
          ? idle.deliverRunMs
          : 0;
    const gbSeconds = fn ? schedule.runsPerMonth * (runMs / 1000) * (fn.memoryMb / 1024) : 0;
    lines.push({
      item: `Schedule: ${schedule.target ?? schedule.name}`,
      counted: `${fixed(schedule.runsPerMonth, 0)} runs of ${fixed(runMs, 0)} ms at ${fn?.memoryMb ?? '-'} MB (${fixed(gbSeconds, 0)} GB-s)`,
      usd:
        schedule.runsPerMonth * (p('lambdaRequest') + (schedule.scheduler ? p('schedulerInvocation') : 0)) +
        gbSeconds * p(fn?.architecture === 'x86_64' ? 'lambdaX86GbSecond' : 'lambdaArmGbSecond'),
    });
  }
  // Lambda's pollers of an SQS event source: 5 long polls of up to 20 s each at all times.
  const emptyReceives = stack.sqsEventSources * 5 * 3 * 60 * 24 * 30;
  lines.push({
    item: 'SQS empty receives (event source pollers)',
    counted: `${emptyReceives} requests`,
    usd: emptyReceives * p('sqsRequest'),
  });
  const provisioned = [...stack.functions.values()].filter((fn) => fn.provisionedConcurrency > 0);
  lines.push({
    item: 'Provisioned concurrency',
    counted: provisioned.length
      ? provisioned.map((fn) => `${fn.entry} x${fn.provisionedConcurrency}`).join(', ')
      : 'none',
    usd: provisioned.reduce(
      (sum, fn) =>
        sum +
        fn.provisionedConcurrency * (fn.memoryMb / 1024) * MONTH_SECONDS * p('lambdaArmProvisionedGbSecond'),
      0,
    ),
  });
  return lines;
};

const usd = (value: number) =>
  value >= 100 ? fixed(value, 0) : value >= 1 ? fixed(value, 2) : fixed(value, 3);

export const formatBill = (
  figures: CaseFigures,
  bill: Bill,
): { title: string; rows: string[][]; notes: string[] } => ({
  title: `${figures.name}: USD ${usd(bill.total * MILLION)} per million settled transfers`,
  rows: [
    ...bill.lines.map((line) => [
      line.item,
      line.counted,
      usd(line.usd * MILLION),
      `${fixed((line.usd / bill.total) * 100, 1)} %`,
    ]),
    ['**total**', '', `**${usd(bill.total * MILLION)}**`, '100 %'],
  ],
  notes: [
    `Lambda by function (per transfer: invocations, billed ms, log bytes; USD per million): ${bill.lambda
      .map(
        (f) =>
          `${f.entry.replace(/^lambdas\//, '').replace(/\.ts$/, '')} ${fixed(f.invocations, 2)} x (each ${fixed(f.typicalMs, 0)} ms), ${fixed(f.billedMs, 0)} ms at ${f.memoryMb} MB, ${fixed(f.logBytes, 0)} B of log, ${usd(f.usd * MILLION)}`,
      )
      .join('; ')}.`,
    `Table per transfer: ${Object.entries(figures.table.calls)
      .map(([name, n]) => `${name} ${fixed(n, 2)}`)
      .join(', ')}; write units ${Object.entries(figures.table.writeUnits)
      .map(([name, n]) => `${name} ${fixed(n, 1)}`)
      .join(', ')}; read units ${Object.entries(figures.table.readUnits)
      .map(([name, n]) => `${name} ${fixed(n, 1)}`)
      .join(
        ', ',
      )}; refused conditional writes ${fixed(figures.table.conditionFailures, 2)}. Clearing polls ${fixed(figures.polls, 2)}, webhook deliveries ${fixed(figures.deliveries, 2)}.`,
  ],
});
