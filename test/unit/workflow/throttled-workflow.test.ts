import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

import { validateCheckAndSubmit } from '#domain/credit-transfers/lifecycle-steps';
import { workflowDependencies } from '#workflow/dependencies';
import { executionsOf, initiate, reach, startRunner, startWorkflowEnvironment, stored } from './harness.ts';

let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;

beforeAll(async () => {
  environment = await startWorkflowEnvironment();
});

afterAll(async () => {
  await environment?.close();
});

/** What Step Functions reports when Lambda refuses an invocation for want of concurrency. */
class TooManyRequestsError extends Error {
  constructor() {
    super('Rate Exceeded.');
    this.name = 'Lambda.TooManyRequestsException';
  }
}

/** Refusals in a row per transfer: more than a throttle of a few seconds. */
const REFUSALS = 8;

describe('the workflow with its functions throttled', () => {
  it('buffers every start at a concurrency of one and loses nothing when Lambda refuses invocations', async () => {
    // Each transfer's first step is refused REFUSALS times before it runs, as a function at its
    // reserved concurrency refuses invocations (more than a few seconds of retries); then it runs.
    const refusals = new Map<string, number>();
    const throttledFirstStep = async (input: unknown) => {
      const { paymentId } = input as { paymentId: string };
      const refused = refusals.get(paymentId) ?? 0;
      if (refused < REFUSALS) {
        refusals.set(paymentId, refused + 1);
        throw new TooManyRequestsError();
      }
      return validateCheckAndSubmit(workflowDependencies(), input as never);
    };
    const { runner, executions } = await startRunner({
      // The local equivalent of a reserved concurrency of 1: one execution, one task at a time.
      maxRunning: 1,
      maxRunningWhenQuiet: 1,
      maxActiveTasks: 1,
      maxActiveTasksWhenQuiet: 1,
      taskOverrides: { ValidateCheckAndSubmit: throttledFirstStep },
    });
    const paymentIds = await Promise.all(Array.from({ length: 6 }, () => initiate(runner)));
    await runner.idle();

    for (const paymentId of paymentIds) {
      await reach(paymentId, 'AcceptedSettlementCompleted');
      expect((await stored(paymentId)).parked).toBeUndefined();
      expect(refusals.get(paymentId)).toBe(REFUSALS);
      expect(executionsOf(executions, paymentId).map((execution) => execution.status)).toEqual(['SUCCEEDED']);
    }
  });
});
