/**
 * The reserved concurrency of `prod`'s functions, from one formula over documented inputs
 * (docs/operations.md, "Concurrency"). A function's concurrency is its arrival rate times its
 * duration (Little's law); the API's rate is what its throttle admits at once (the burst), so a
 * burst the stage lets in is never refused by Lambda (API Gateway would answer it 500).
 */
export interface ConcurrencyInputs {
  /** Requests the API stage admits at once (its burst limit, lib/constructs/api.ts): no route gets more. */
  readonly apiBurst: number;
  /** Requests per second the API stage admits (its throttle rate): no more initiations arrive. */
  readonly apiRatePerSecond: number;
  /** p99 of an authenticated route's function, seconds. */
  readonly apiP99Seconds: number;
  /** p99 of the authorizer, seconds, cold starts and the key set's first read included. */
  readonly authorizerP99Seconds: number;
  /** Requests the public routes (token endpoint, documents) admit at once: their own method throttles. */
  readonly publicBurst: number;
  /** p99 of a public route's function, seconds (the token endpoint's secret check is the slowest). */
  readonly publicP99Seconds: number;
  /** p99 of one connector call, seconds: measure it before going live. */
  readonly connectorP99Seconds: number;
  /** Connector calls of the slowest workflow step (the profile check and the submission). */
  readonly connectorCallsPerStep: number;
  /** The table's reads and writes of a step, seconds. */
  readonly tableSeconds: number;
  /** The largest batch a tenant submits (pain.001), in transfers. */
  readonly largestBatch: number;
  /**
   * Seconds in which a largest batch's transfers all get through their first step beside the
   * API's peak: the workflow's throttle retries buffer the rest meanwhile, so this stays well
   * inside the fast path's 5 minutes (an execution that ran out would count as a failed attempt).
   */
  readonly batchDrainSeconds: number;
  /** p99 of the catch-all (ParkTransfer): a table write and an event, seconds. */
  readonly parkSeconds: number;
}

/** The inputs of `prod`, each a judgement to revisit with measured figures. */
export const PRODUCTION_CONCURRENCY_INPUTS: ConcurrencyInputs = {
  apiBurst: 100,
  apiRatePerSecond: 50,
  apiP99Seconds: 0.2,
  authorizerP99Seconds: 0.5,
  publicBurst: 20,
  publicP99Seconds: 0.3,
  connectorP99Seconds: 0.25,
  connectorCallsPerStep: 2,
  tableSeconds: 0.1,
  largestBatch: 2000,
  batchDrainSeconds: 120,
  parkSeconds: 0.2,
};

export interface ReservedConcurrency {
  /** The authorizer: every authorized request may miss its cache. */
  readonly authorizer: number;
  /** Each authenticated route's function. */
  readonly api: number;
  /** Each public route's function (token endpoint, key set, metadata, documents). */
  readonly public: number;
  /** Each workflow step's function, the batch start's and webhook delivery's. */
  readonly workflow: number;
  /** The reconciler: a scheduled run and an operator's. */
  readonly reconciler: number;
  /** The catch-all: in a connector outage every execution ends in it. */
  readonly parking: number;
}

/** Transfers per second entering the workflow at peak: the API's initiations and a largest batch draining. */
export const workflowRatePerSecond = (inputs: ConcurrencyInputs): number =>
  inputs.apiRatePerSecond + inputs.largestBatch / inputs.batchDrainSeconds;

/** Seconds of the slowest workflow step: its connector calls and the table. */
export const slowestStepSeconds = (inputs: ConcurrencyInputs): number =>
  inputs.connectorCallsPerStep * inputs.connectorP99Seconds + inputs.tableSeconds;

/** The formula: each group's reservation per function. */
export const reservedConcurrencyOf = (inputs: ConcurrencyInputs): ReservedConcurrency => {
  // Rounded up, after rounding away float noise (100 x 0.2 is 20.000000000000004).
  const executions = (value: number): number => Math.ceil(Number(value.toFixed(6)));
  const workflowRate = workflowRatePerSecond(inputs);
  return {
    authorizer: executions(inputs.apiBurst * inputs.authorizerP99Seconds),
    api: executions(inputs.apiBurst * inputs.apiP99Seconds),
    public: executions(inputs.publicBurst * inputs.publicP99Seconds),
    workflow: executions(workflowRate * slowestStepSeconds(inputs)),
    reconciler: 2,
    parking: executions(workflowRate * inputs.parkSeconds),
  };
};

/**
 * Lifecycle starts per second a batch is paced to: what a workflow function's reservation runs
 * through (its concurrency over the slowest step's duration, Little's law again) less the API's
 * initiations at peak, rounded down and at least 1. With `prod`'s inputs the largest batch's
 * share of the formula (largestBatch / batchDrainSeconds), so its steps are never throttled.
 */
export const batchStartsPerSecond = (
  inputs: ConcurrencyInputs,
  workflowReservation: number = reservedConcurrencyOf(inputs).workflow,
): number =>
  Math.max(
    1,
    Math.floor(
      Number((workflowReservation / slowestStepSeconds(inputs) - inputs.apiRatePerSecond).toFixed(6)),
    ),
  );

/** The batch start function's timeout (lib/constructs/batch-lifecycles.ts), seconds. */
export const BATCH_START_TIMEOUT_SECONDS = 300;
