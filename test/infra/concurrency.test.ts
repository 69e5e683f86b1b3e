import { describe, expect, it } from 'vitest';
import {
  type ConcurrencyInputs,
  PRODUCTION_CONCURRENCY_INPUTS,
  reservedConcurrencyOf,
  slowestStepSeconds,
  workflowRatePerSecond,
} from '../../lib/concurrency.ts';
import {
  FUNCTIONS_PER_GROUP,
  PRODUCTION_RESERVED_CONCURRENCY,
  reservedConcurrencyTotal,
} from '../../lib/operations-config.ts';

/** The reservation formula (lib/concurrency.ts), as docs/operations.md "Sizing the concurrency" states it. */
describe('reserved concurrency from one formula', () => {
  it('gives prod the figures the runbook states, 868 in all, needing a quota of 968', () => {
    expect(PRODUCTION_RESERVED_CONCURRENCY).toEqual({
      authorizer: 50,
      api: 20,
      public: 6,
      workflow: 40,
      reconciler: 2,
      parking: 14,
    });
    expect(FUNCTIONS_PER_GROUP).toEqual({
      authorizer: 1,
      api: 24,
      public: 7,
      workflow: 7,
      reconciler: 1,
      parking: 1,
    });
    expect(reservedConcurrencyTotal(PRODUCTION_RESERVED_CONCURRENCY)).toBe(868);
  });

  it('gives the public documents far less than the paying routes', () => {
    expect(PRODUCTION_RESERVED_CONCURRENCY.public).toBeLessThan(PRODUCTION_RESERVED_CONCURRENCY.api / 2);
  });

  it('follows each input: a slower connector, a larger batch, a faster stage', () => {
    const base = PRODUCTION_CONCURRENCY_INPUTS;
    const of = (change: Partial<ConcurrencyInputs>) => reservedConcurrencyOf({ ...base, ...change });
    // The runbook's example: a connector p99 of 1 s.
    expect(of({ connectorP99Seconds: 1 }).workflow).toBe(140);
    expect(of({ largestBatch: 8000 }).workflow).toBeGreaterThan(PRODUCTION_RESERVED_CONCURRENCY.workflow);
    expect(of({ apiBurst: 200 }).api).toBe(40);
    expect(of({ apiBurst: 200 }).authorizer).toBe(100);
    expect(slowestStepSeconds(base)).toBeCloseTo(0.6);
    expect(workflowRatePerSecond(base)).toBeCloseTo(50 + 2000 / 120);
  });

  it('sizes the catch-all for an outage: every execution at the workflow rate ends in it', () => {
    const { parking } = PRODUCTION_RESERVED_CONCURRENCY;
    expect(parking).toBe(
      Math.ceil(
        workflowRatePerSecond(PRODUCTION_CONCURRENCY_INPUTS) * PRODUCTION_CONCURRENCY_INPUTS.parkSeconds,
      ),
    );
    expect(parking).toBeGreaterThan(2);
  });
});
