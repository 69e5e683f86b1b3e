import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  // Injected crashes are logged by the task wrapper; the assertions say what matters.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
});

import { type DocumentClient, documentClient } from '#adapters/aws/dynamodb-client';
import { STALL_SECONDS } from '#domain/credit-transfers/lifecycle';
import { DEFAULT_LIFECYCLE_SETTINGS, pollBudgetSeconds } from '#domain/credit-transfers/lifecycle-settings';
import { lifecycleSettings, workflowDependencies } from '#workflow/dependencies';
import { reconcile } from '#workflow/reconcile';
import { operationsEventPublisher } from '#workflow/status-events';
import {
  clearingRecord,
  initiate,
  lifecycleStore,
  publishedEvents,
  publishingAnnouncer,
  startRunner,
  startWorkflowEnvironment,
  statusesOf,
  stored,
} from './harness.ts';

/**
 * What one settled transfer costs the table, counted at the document client every store and the
 * sandbox rail share, and what a crash after any one of those calls leaves behind.
 */

const SETTLED = [
  'Received',
  'AcceptedTechnicalValidation',
  'AcceptedCustomerProfile',
  'AcceptedSettlementInProcess',
  'AcceptedSettlementCompleted',
];
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);
/**
 * Table calls of the service per settled transfer, initiation included: 8 until technical
 * validation was recorded in the customer-profile check's write.
 */
const MOST_SERVICE_CALLS = 7;

const OPERATIONS = ['get', 'put', 'update', 'delete', 'query', 'scan', 'batchGet', 'batchWrite'] as const;
type Operation = (typeof OPERATIONS)[number];

interface Call {
  operation: Operation;
  /** `service`, or `sandbox clearing` (clearing's own record, kept in the same table by the sandbox rail). */
  owner: string;
  input: Record<string, unknown>;
}

/**
 * Counts every call of the shared document client; `afterCall`, when set, runs after a call
 * returned and may throw in its place (the write was made, its answer lost).
 */
const countCalls = (client: DocumentClient) => {
  const calls: Call[] = [];
  const hooks: { afterCall?: (call: Call, index: number) => void } = {};
  for (const operation of OPERATIONS) {
    const original = client[operation].bind(client) as (input: object) => Promise<unknown>;
    vi.spyOn(client, operation).mockImplementation((async (input: Record<string, unknown>) => {
      const key = (input.Key ?? input.Item) as { pk?: string } | undefined;
      const call: Call = {
        operation,
        owner: String(key?.pk ?? '').startsWith('SANDBOX_CLEARING#') ? 'sandbox clearing' : 'service',
        input,
      };
      calls.push(call);
      const answer = await original(input);
      hooks.afterCall?.(call, calls.length - 1);
      return answer;
    }) as never);
  }
  return { calls, hooks };
};

let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;

beforeAll(async () => {
  environment = await startWorkflowEnvironment();
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await environment?.close();
});

const statusWritesOf = (calls: readonly Call[]) =>
  calls.filter(
    (call) => call.operation === 'update' && String(call.input.UpdateExpression).includes('#status = :to'),
  );

describe('table calls per settled transfer', () => {
  it(`settles a transfer in at most ${MOST_SERVICE_CALLS} calls of the service, initiation included, each status change a conditional write naming the status it leaves`, async () => {
    // Clearing's polls as on a stage (a budget of minutes), the first one a second after submission.
    vi.stubEnv('CLEARING_POLL_INITIAL_SECONDS', String(DEFAULT_LIFECYCLE_SETTINGS.pollInitialSeconds));
    vi.stubEnv('CLEARING_POLL_MAX_ATTEMPTS', String(DEFAULT_LIFECYCLE_SETTINGS.pollMaxAttempts));
    const { runner } = await startRunner();
    const { calls } = countCalls(documentClient());
    const paymentId = await initiate(runner);
    await runner.idle();
    vi.unstubAllEnvs();

    const record = await stored(paymentId);
    expect(statusesOf(record)).toEqual(SETTLED);
    const service = calls.filter((call) => call.owner === 'service').slice(0, -1); // less the test's own read
    const shape = service.map((call) => call.operation);
    expect(service.length, `service calls: ${shape.join(', ')}`).toBeLessThanOrEqual(MOST_SERVICE_CALLS);
    // Initiation, one read in each step that needs the payment, the status writes and the last bookkeeping.
    expect(shape).toEqual(['put', 'get', 'update', 'update', 'get', 'update', 'update']);
    expect(calls.filter((call) => call.owner === 'sandbox clearing').map((call) => call.operation)).toEqual([
      'update',
      'update',
    ]);

    // Every change: a conditional write leaving exactly the status before it, technical validation
    // recorded with the customer-profile check's outcome in one, each with its history entry.
    const writes = statusWritesOf(service);
    const values = (call: Call) => call.input.ExpressionAttributeValues as Record<string, unknown>;
    expect(writes.map((call) => [values(call)[':from'], values(call)[':to']])).toEqual([
      ['Received', 'AcceptedCustomerProfile'],
      ['AcceptedCustomerProfile', 'AcceptedSettlementInProcess'],
      ['AcceptedSettlementInProcess', 'AcceptedSettlementCompleted'],
    ]);
    expect(
      writes.map((call) => (values(call)[':entries'] as { status: string }[]).map((entry) => entry.status)),
    ).toEqual([SETTLED.slice(1, 3), SETTLED.slice(3, 4), SETTLED.slice(4)]);
    for (const write of writes) expect(String(write.input.ConditionExpression)).toMatch(/^#status = :from\b/);
    // The recovery index moves only when it must: its entry is written at initiation, moved once
    // at the submission (clearing's polls may take their whole budget), and removed at the end.
    const movesCheck = (call: Call) => /#due = :due/.test(String(call.input.UpdateExpression));
    expect(
      writes
        .filter(movesCheck)
        .map((call) => (call.input.ExpressionAttributeValues as Record<string, unknown>)[':to']),
    ).toEqual(['AcceptedSettlementInProcess']);
    for (const write of writes.filter((call) => !movesCheck(call)))
      expect(String(write.input.ConditionExpression)).toContain(
        'attribute_exists(#due) AND attribute_not_exists(parked)',
      );
    // Every change published once, the history kept whole, and the transfer out of recovery.
    const events = await publishedEvents(paymentId);
    expect(events.map((event) => event.detail.sequence)).toEqual([0, 1, 2, 3, 4]);
    expect(record.publishedCount).toBe(5);
    expect(record.nextCheckAt).toBeUndefined();
  });
});

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

/**
 * What a restart runs: the reconciler over every unfinished transfer, then the executions it
 * starts. A crash between a submission's claim and its answer leaves a claim no one holds: the
 * restart comes after the claim's lease (a second here), as a real one does.
 */
const restart = async (claimLeft = false) => {
  if (claimLeft) await sleep(1100);
  const recovery = await startRunner();
  await reconcile(() => ({
    ...workflowDependencies(),
    workflow: recovery.runner,
    announcer: publishingAnnouncer,
    events: operationsEventPublisher(),
  }))({ everything: true });
  await recovery.runner.idle();
  return recovery;
};

describe.each([
  ['on the fast path (Express)', {}, ['EXPRESS']],
  [
    'handed over to the machine of long waits (a value-date hold, Standard)',
    { valueDate: tomorrow() },
    ['EXPRESS', 'STANDARD'],
  ],
])('a crash after any one table call of a settling transfer %s', (_, transfer, machines) => {
  /** The calls of one undisturbed settlement after its initiation: where a crash can fall. */
  const callsAfterInitiation = async () => {
    const { runner, executions } = await startRunner();
    const { calls } = countCalls(documentClient());
    const paymentId = await initiate(runner, transfer);
    await runner.idle();
    await stored(paymentId);
    vi.restoreAllMocks();
    expect(executions.filter((e) => e.paymentId === paymentId).map((e) => e.type)).toEqual(machines);
    // Less the initiation's write and the test's own read.
    return calls.length - 2;
  };

  it('leaves every transfer recoverable: settled once, every change published, out of recovery', async () => {
    const crashPoints = await callsAfterInitiation();
    expect(crashPoints).toBeGreaterThanOrEqual(8);
    for (let crashAt = 1; crashAt <= crashPoints; crashAt++) {
      // A process that died runs nothing more; the workflow's catch-all (which would count the
      // failed attempt) is left out, so only the settlement's own calls are counted.
      const { runner, executions } = await startRunner({
        taskOverrides: { ParkIfExhausted: async () => ({ parked: false, attempts: 1 }) },
      });
      const { calls, hooks } = countCalls(documentClient());
      let crashed: Call | undefined;
      hooks.afterCall = (call, index) => {
        if (index === crashAt && crashed === undefined) {
          crashed = call;
          // The process dies: the call was made, nothing after it runs, and no retry follows
          // (an error the ASL never retries ends the execution).
          throw Object.assign(new Error('the process died'), { name: 'InvalidLifecycleInputError' });
        }
      };
      const paymentId = await initiate(runner, transfer);
      await runner.idle();
      const where = `crash after call ${crashAt} (${crashed?.owner} ${crashed?.operation})`;
      expect(crashed, where).toBeDefined();
      expect(calls.length, where).toBe(crashAt + 1);
      vi.restoreAllMocks();

      // Stuck where the crash left it, and found by its due time: a recovery entry in a shard the
      // reconciler reads, due within the stall time and clearing's poll budget (the longest any
      // step leaves it) from now, or from the hold's end for a held transfer, unless every change
      // is published already and it is final.
      const stuck = await stored(paymentId);
      if (!(FINAL.has(stuck.status) && stuck.publishedCount === stuck.history.length)) {
        // The stage's budget: the workflow's functions may keep the settings of the first test.
        const budget = Math.max(
          pollBudgetSeconds(lifecycleSettings()),
          pollBudgetSeconds(DEFAULT_LIFECYCLE_SETTINGS),
        );
        const { valueDate } = transfer as { valueDate?: string };
        const holdEnd = valueDate === undefined ? 0 : Date.parse(`${valueDate}T00:00:00Z`);
        const bound = new Date(Math.max(Date.now(), holdEnd) + (STALL_SECONDS + budget) * 1000);
        expect(stuck.parked, where).toBeUndefined();
        expect(
          (await lifecycleStore().due(bound, 10_000)).map((candidate) => candidate.paymentId),
          where,
        ).toContain(paymentId);
      }

      // What a restart runs, after which the transfer must have settled once.
      await restart(stuck.status === 'AcceptedCustomerProfile' && stuck.submittedAt !== undefined);

      const record = await stored(paymentId);
      expect(statusesOf(record), where).toEqual(SETTLED);
      const sequences = new Set((await publishedEvents(paymentId)).map((event) => event.detail.sequence));
      expect([...sequences].sort(), where).toEqual([0, 1, 2, 3, 4]);
      expect({ published: record.publishedCount, nextCheckAt: record.nextCheckAt }, where).toEqual({
        published: 5,
        nextCheckAt: undefined,
      });
      expect((await clearingRecord(paymentId))?.settledAt, where).toBeDefined();
      // The crash did end the execution it hit (and nothing after it): the reconciler's did the rest.
      expect(
        executions.map((execution) => execution.status),
        where,
      ).toEqual([...(executions.length > 1 ? ['SUCCEEDED'] : []), 'FAILED']);
    }
  }, 300_000);

  // Only a transfer handed over has a hand-over to fail: skipped, not passed, on the fast path alone.
  it.runIf(machines.length > 1)(
    'leaves the transfer recoverable when the hand-over itself fails',
    async () => {
      const { runner, executions } = await startRunner({
        taskOverrides: {
          ParkIfExhausted: async () => ({ parked: false, attempts: 1 }),
          HandOverToLongWaits: async () => {
            throw Object.assign(new Error('the process died'), { name: 'InvalidLifecycleInputError' });
          },
        },
      });
      const paymentId = await initiate(runner, transfer);
      await runner.idle();
      expect(executions.map((execution) => [execution.type, execution.status])).toEqual([
        ['EXPRESS', 'FAILED'],
      ]);
      // Due again once its value date has come: what the reconciler finds then (here, now).
      const recovery = await restart();
      expect(statusesOf(await stored(paymentId))).toEqual(SETTLED);
      expect(recovery.executions.map((execution) => execution.type)).toEqual(['EXPRESS', 'STANDARD']);
    },
  );
});
