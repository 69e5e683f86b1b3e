import { randomUUID } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import type { RunOptions, StateMachine, StateMachineDefinition } from 'aws-local-stepfunctions';
import { checkStandInCall } from '#adapters/aws/stand-ins';
import { type LifecycleStart, lifecycleExecutionName } from '#domain/credit-transfers/lifecycle';
import type { WorkflowStarter } from '#domain/credit-transfers/ports';
import { logger } from '#shared/logger';
import {
  type AslDefinition,
  HAND_OVER_STATE,
  LONG_WAITS_SUBSTITUTION,
  readLifecycleDefinition,
  readLongWaitsDefinition,
  substitutionOf,
  WORKFLOW_FUNCTIONS,
} from '#workflow/task-functions';
import { msSinceApiRequest } from './api-activity.ts';
import { handlerModuleUrl } from './handler-modules.ts';
import {
  LOCAL_ACCOUNT,
  LOCAL_FAST_PATH_ROLE,
  LOCAL_LONG_WAITS_STATE_MACHINE_NAME,
  LOCAL_REGION,
  LOCAL_STATE_MACHINE_NAME,
} from './iam-policies.ts';
import { functionNameOf, inOwnContext } from './invocations.ts';
import { checkServiceCall } from './service-calls.ts';
import { validatedStateMachine } from './validated-state-machine.ts';

/**
 * Runs the lifecycle's two ASL files in this process with aws-local-stepfunctions, their Task
 * states bound to the same handler functions Lambda runs: the fast path (EXPRESS on AWS), which
 * every start runs, and the machine of long waits (STANDARD), which the fast path's hand-over
 * state starts. Names follow Step Functions: a repeated start of the fast path runs again (Express
 * executions run at least once, and a name does not make them unique); a start of the machine of
 * long waits under a name already used (while this process lives) is refused with
 * ExecutionAlreadyExists unless that execution still runs with the same input, so at most one
 * execution of long waits per name ever runs.
 *
 * The API's handlers share this process and the table: unbounded, the workflow would take most
 * of both under load and starve initiation. So while the API is receiving requests at most
 * `maxRunning` executions run at once (later starts wait, holding only their input) and at most
 * `maxActiveTasks` Task states run at once across them; once it has been quiet for
 * `apiQuietAfterMs`, many more may (`maxRunningWhenQuiet`, `maxActiveTasksWhenQuiet`), so a
 * backlog left by a burst settles fast. An execution waiting in a Wait state (a value date, a
 * clearing poll) holds neither: it needs no CPU, and a thousand transfers held for tomorrow must
 * not keep anyone's new transfer from running today.
 *
 * Waiting starts and waiting tasks are served fairly between tenants: one queue per tenant, the
 * queues served in turn (within a tenant, the oldest execution first), so one tenant's backlog
 * delays another's work by at most one turn per waiting tenant.
 */

type TaskHandler = (input: unknown) => Promise<unknown>;
type Overrides = NonNullable<RunOptions['overrides']>;

export interface ExecutionSummary {
  name: string;
  /** Which state machine ran it: the fast path (EXPRESS on AWS) or the one of long waits (STANDARD). */
  type: 'EXPRESS' | 'STANDARD';
  tenant: string;
  paymentId: string;
  trigger: LifecycleStart['trigger'];
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  /** States entered plus retries: what Step Functions bills as state transitions. */
  transitions: number;
  retries: number;
  /** Task states entered, retries not counted (each one Lambda invocation or more). */
  taskStates: number;
  startedAt: string;
  stoppedAt: string;
  error?: string;
}

export interface LocalWorkflowRunnerOptions {
  projectRoot: string;
  /** Appends one JSON line per finished execution (the local execution history). */
  executionsFile?: string;
  /** Task state name -> handler, replacing the bound one (tests inject failures so). */
  taskOverrides?: Record<string, TaskHandler>;
  /** Wait state name -> milliseconds, instead of its Seconds/Timestamp. */
  waitTimeOverrides?: Record<string, number>;
  /** State name -> milliseconds between retries, instead of its Retry intervals. */
  retryIntervalOverrides?: Record<string, number>;
  /** Called with every finished execution. */
  onExecution?: (summary: ExecutionSummary) => void;
  /** Executions running at once while the API is busy; later starts wait their turn (default 64). */
  maxRunning?: number;
  /** Executions running at once once the API has been quiet (default 512). */
  maxRunningWhenQuiet?: number;
  /** Task state invocations at once, across all executions, while the API is busy (default 12). */
  maxActiveTasks?: number;
  /** Task state invocations at once once the API has been quiet (default 16). */
  maxActiveTasksWhenQuiet?: number;
  /** Milliseconds without an API request after which the API counts as quiet (default 1000). */
  apiQuietAfterMs?: number;
}

const DEFAULT_MAX_RUNNING = 64;
const DEFAULT_MAX_RUNNING_WHEN_QUIET = 512;
const DEFAULT_MAX_ACTIVE_TASKS = 12;
const DEFAULT_MAX_ACTIVE_TASKS_WHEN_QUIET = 16;
const DEFAULT_API_QUIET_AFTER_MS = 1000;
/** How often waiting tasks and starts look again whether their limit has grown (none may finish meanwhile). */
const LIMIT_RECHECK_MS = 100;

/**
 * Items waiting their turn, one queue per tenant: `shift` takes from each tenant in turn, and
 * within a tenant the item of lowest `order` first.
 */
export class FairQueue<T> {
  /** Tenants in the order they are served next (a Map keeps insertion order). */
  private readonly queues = new Map<string, { order: number; item: T }[]>();
  private count = 0;

  push(tenant: string, order: number, item: T): void {
    const queue = this.queues.get(tenant) ?? [];
    if (queue.length === 0) this.queues.set(tenant, queue);
    // Mostly appended at the end: orders grow as work arrives.
    let at = queue.length;
    while (at > 0 && (queue[at - 1]?.order ?? 0) > order) at--;
    queue.splice(at, 0, { order, item });
    this.count++;
  }

  shift(): T | undefined {
    const next = this.queues.entries().next();
    if (next.done) return undefined;
    const [tenant, queue] = next.value;
    const entry = queue.shift();
    // This tenant goes to the back of the line; a tenant with nothing left leaves it.
    this.queues.delete(tenant);
    if (queue.length > 0) this.queues.set(tenant, queue);
    this.count--;
    return entry?.item;
  }

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.queues.clear();
    this.count = 0;
  }
}

/**
 * At most `size()` calls of `run` at a time; the others wait in a FairQueue. The size may change
 * at any time: waiters are let in when a call finishes and, while any wait, on a short timer.
 */
class FairPermits {
  private active = 0;
  private readonly waiting = new FairQueue<() => void>();
  private recheck: NodeJS.Timeout | undefined;

  constructor(private readonly size: () => number) {}

  async run<T>(tenant: string, order: number, task: () => Promise<T>): Promise<T> {
    if (this.waiting.size === 0 && this.active < this.size()) this.active++;
    else {
      // Unref'd: a timer alone must not keep the process alive.
      this.recheck ??= setInterval(() => this.admit(), LIMIT_RECHECK_MS).unref();
      await new Promise<void>((resolve) => this.waiting.push(tenant, order, resolve));
    }
    try {
      return await task();
    } finally {
      this.active--;
      this.admit();
    }
  }

  private admit(): void {
    const size = this.size();
    while (this.active < size) {
      const next = this.waiting.shift();
      if (!next) break;
      this.active++;
      next();
    }
    if (this.waiting.size === 0 && this.recheck) {
      clearInterval(this.recheck);
      this.recheck = undefined;
    }
  }
}

const LOCAL_FUNCTION_ARN = (substitution: string) =>
  `arn:aws:lambda:local:000000000000:function:credit-transfers-${substitution.replace(/FunctionArn$/, '')}`;
const stateMachineArn = (name: string) =>
  `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stateMachine:${name}`;
export const LOCAL_STATE_MACHINE_ARN = stateMachineArn(LOCAL_STATE_MACHINE_NAME);
export const LOCAL_LONG_WAITS_STATE_MACHINE_ARN = stateMachineArn(LOCAL_LONG_WAITS_STATE_MACHINE_NAME);

/** The hand-over's parameters, as Step Functions passes them to StartExecution. */
export interface StartExecutionParameters {
  StateMachineArn: string;
  Name: string;
  Input: unknown;
}

/** The error Step Functions' startExecution integration raises for a name already used. */
export class ExecutionAlreadyExistsError extends Error {
  constructor(name: string) {
    super(`Execution Already Exists: '${LOCAL_LONG_WAITS_STATE_MACHINE_ARN}:${name}'`);
    this.name = 'StepFunctions.ExecutionAlreadyExistsException';
  }
}

/**
 * The ASL with each `${...FunctionArn}` replaced, and the fast path's `${LongWaitsStateMachineArn}`,
 * as CDK's DefinitionSubstitutions would.
 */
export const substitutedDefinition = (definition: AslDefinition): StateMachineDefinition => {
  const states = Object.fromEntries(
    Object.entries(definition.States).map(([name, state]) => {
      const substitution = substitutionOf(state.Resource);
      const parameters = state.Parameters as Record<string, unknown> | undefined;
      return [
        name,
        substitution !== undefined
          ? { ...state, Resource: LOCAL_FUNCTION_ARN(substitution) }
          : parameters?.StateMachineArn === `\${${LONG_WAITS_SUBSTITUTION}}`
            ? { ...state, Parameters: { ...parameters, StateMachineArn: LOCAL_LONG_WAITS_STATE_MACHINE_ARN } }
            : state,
      ];
    }),
  );
  // The runner waits with one Node timer, which fires at once past 2^31 - 1 ms (24.8 days): the
  // execution's overall bound is clamped to that here (the local longest hold is 20 days).
  const timeout =
    typeof definition.TimeoutSeconds === 'number'
      ? { TimeoutSeconds: Math.min(definition.TimeoutSeconds, LONGEST_TIMER_SECONDS) }
      : {};
  return { ...definition, ...timeout, States: states } as unknown as StateMachineDefinition;
};

const LONGEST_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** The handler entry of the function a Task state's Resource names. */
const entryOf = (state: { Resource?: string }): string | undefined =>
  Object.values(WORKFLOW_FUNCTIONS).find((fn) => fn.substitution === substitutionOf(state.Resource))?.entry;

/** Task state name -> the handler its Resource names (a Step Functions integration is the runner's own). */
const boundHandlers = async (definition: AslDefinition): Promise<Record<string, TaskHandler>> => {
  const bySubstitution = new Map<string, TaskHandler>();
  for (const [key, fn] of Object.entries(WORKFLOW_FUNCTIONS)) {
    const module = (await import(handlerModuleUrl(fn.entry))) as {
      handler: TaskHandler;
    };
    // Each task runs as its function, under that function's IAM policies.
    const functionName = functionNameOf(key);
    bySubstitution.set(fn.substitution, (input) =>
      inOwnContext(functionName, randomUUID(), () => module.handler(input)),
    );
  }
  const handlers: Record<string, TaskHandler> = {};
  for (const [name, state] of Object.entries(definition.States)) {
    if (state.Type !== 'Task' || name === HAND_OVER_STATE) continue;
    const substitution = substitutionOf(state.Resource);
    const handler = substitution === undefined ? undefined : bySubstitution.get(substitution);
    if (!handler) throw new Error(`Task state ${name}: no handler for Resource ${state.Resource}`);
    handlers[name] = handler;
  }
  return handlers;
};

/**
 * The state machine's role may invoke the task's function (IAM, as checked locally), or the Task
 * fails as Step Functions fails it on AWS: Lambda.AWSLambdaException, the AccessDeniedException
 * in its message, for the state's Retry and Catch to handle.
 */
const invocationAllowed = async (machine: ExecutionSummary['type'], substitution: string): Promise<void> => {
  try {
    await checkServiceCall({ kind: 'task', machine, substitution });
  } catch (error) {
    const refused = new Error(
      `${(error as Error).message} (Service: Lambda, Status Code: 403, Error Code: AccessDeniedException)`,
    );
    refused.name = 'Lambda.AWSLambdaException';
    throw refused;
  }
};

interface Running {
  abort: () => void;
  done: Promise<void>;
}

const transferOf = (start: { tenant: string; paymentId: string }) => `${start.tenant}/${start.paymentId}`;

/** Which tenant and transfer a Task state's input is for: the lifecycle state carries both. */
const identifiersOf = (input: unknown): { tenant: string; transfer: string } => {
  const { tenant, paymentId } = (input ?? {}) as { tenant?: unknown; paymentId?: unknown };
  const tenantName = typeof tenant === 'string' ? tenant : '';
  return { tenant: tenantName, transfer: transferOf({ tenant: tenantName, paymentId: String(paymentId) }) };
};

/** What an execution runs on: the fast path's start, or the state the fast path handed over. */
interface Queued {
  name: string;
  type: ExecutionSummary['type'];
  start: LifecycleStart;
  input: Record<string, unknown>;
}

export class LocalWorkflowRunner implements WorkflowStarter {
  /** Executions of long waits by name: the input each was started with, and whether it still runs. */
  private readonly longWaits = new Map<string, { input: string; running: boolean }>();
  private readonly running = new Map<string, Running>();
  /** Starts waiting for an execution slot, per tenant. */
  private readonly pending = new FairQueue<Queued>();
  /** Executions waiting or running, per transfer. */
  private readonly perTransfer = new Map<string, number>();
  /** Running executions that are not in a Wait state: what `maxRunning` bounds. */
  private runnable = 0;
  /** Every start in order: a waiting start's and a waiting task's place in its tenant's queue. */
  private sequence = 0;
  /** Tells executions of the same name apart (the fast path's may run more than once). */
  private runs = 0;
  private stopped = false;
  private recheck: NodeJS.Timeout | undefined;

  private constructor(
    private readonly machines: Readonly<Record<ExecutionSummary['type'], StateMachine>>,
    private readonly overrides: Readonly<Record<ExecutionSummary['type'], Overrides>>,
    private readonly options: LocalWorkflowRunnerOptions,
    private readonly apiQuiet: () => boolean,
    /** Per transfer, the start number of its oldest running execution (its tasks' place in line). */
    private readonly startNumbers: Map<string, number>,
  ) {}

  static async create(options: LocalWorkflowRunnerOptions): Promise<LocalWorkflowRunner> {
    const fastPath = readLifecycleDefinition(options.projectRoot);
    const longWaits = readLongWaitsDefinition(options.projectRoot);
    const machines = {
      EXPRESS: validatedStateMachine(substitutedDefinition(fastPath)),
      STANDARD: validatedStateMachine(substitutedDefinition(longWaits)),
    };
    const handlers = {
      ...(await boundHandlers(fastPath)),
      ...(await boundHandlers(longWaits)),
      ...options.taskOverrides,
    };
    const quietAfterMs = options.apiQuietAfterMs ?? DEFAULT_API_QUIET_AFTER_MS;
    const apiQuiet = () => msSinceApiRequest() >= quietAfterMs;
    const busyTasks = options.maxActiveTasks ?? DEFAULT_MAX_ACTIVE_TASKS;
    const quietTasks = options.maxActiveTasksWhenQuiet ?? DEFAULT_MAX_ACTIVE_TASKS_WHEN_QUIET;
    const taskSlots = new FairPermits(() => (apiQuiet() ? quietTasks : busyTasks));
    const startNumbers = new Map<string, number>();
    const entries = Object.fromEntries(
      [...Object.entries(fastPath.States), ...Object.entries(longWaits.States)].map(([name, state]) => [
        name,
        entryOf(state),
      ]),
    );
    const definitions = { EXPRESS: fastPath, STANDARD: longWaits } as const;
    /** Each machine's tasks: its role's lambda:InvokeFunction checked first, then a Lambda invocation of its own. */
    const boundedFor = (type: ExecutionSummary['type']): Record<string, TaskHandler> =>
      Object.fromEntries(
        Object.entries(handlers).map(([name, handler]) => {
          const substitution = substitutionOf(definitions[type].States[name]?.Resource);
          return [
            name,
            async (input: unknown) => {
              if (substitution !== undefined) await invocationAllowed(type, substitution);
              const { tenant, transfer } = identifiersOf(input);
              // Each task a Lambda invocation of its own: its log lines carry its transfer only.
              return taskSlots.run(tenant, startNumbers.get(transfer) ?? 0, () =>
                inOwnContext(undefined, randomUUID(), () => handler(input), entries[name]),
              );
            },
          ];
        }),
      );
    const bounded = { EXPRESS: boundedFor('EXPRESS'), STANDARD: boundedFor('STANDARD') };
    let runner: LocalWorkflowRunner | undefined;
    // Step Functions' own integration, not a function: no Lambda invocation, no task slot.
    bounded.EXPRESS[HAND_OVER_STATE] ??= (input) =>
      (runner as LocalWorkflowRunner).handOver(input as StartExecutionParameters);
    const overridesOf = (type: ExecutionSummary['type']): Overrides => ({
      taskResourceLocalHandlers: bounded[type] as Overrides['taskResourceLocalHandlers'],
      ...(options.waitTimeOverrides && { waitTimeOverrides: options.waitTimeOverrides }),
      ...(options.retryIntervalOverrides && { retryIntervalOverrides: options.retryIntervalOverrides }),
    });
    runner = new LocalWorkflowRunner(
      machines,
      { EXPRESS: overridesOf('EXPRESS'), STANDARD: overridesOf('STANDARD') },
      options,
      apiQuiet,
      startNumbers,
    );
    return runner;
  }

  /**
   * Starts the fast path. As on AWS, a repeated start runs again (Express executions are not made
   * unique by their name): the steps' conditional writes make a second run change nothing.
   */
  async start(start: LifecycleStart): Promise<void> {
    if (this.stopped) return;
    // A recovery of a transfer whose execution is still waiting its turn or running here would only
    // repeat it: that one drives the transfer, and if it stops short the reconciler finds it due again.
    if (start.trigger === 'recovery' && this.isDriving(start)) return;
    this.enqueue({
      name: lifecycleExecutionName(start),
      type: 'EXPRESS',
      start,
      input: {
        tenant: start.tenant,
        paymentId: start.paymentId,
        trigger: start.trigger,
        ...(start.attempt !== undefined && { attempt: start.attempt }),
      },
    });
  }

  /** True while an execution for the transfer waits its turn or runs here: it drives the transfer. */
  isDriving(transfer: { tenant: string; paymentId: string }): boolean {
    return this.perTransfer.has(transferOf(transfer));
  }

  /**
   * The fast path's HandOverToLongWaits state: StartExecution of the machine of long waits, as the
   * fast path's role (its IAM checked), with Standard's rules for a name already used.
   */
  async handOver(parameters: StartExecutionParameters): Promise<{ ExecutionArn: string; StartDate: string }> {
    await inOwnContext(LOCAL_FAST_PATH_ROLE, randomUUID(), () =>
      checkStandInCall({ action: 'states:StartExecution', resource: LONG_WAITS_SUBSTITUTION }),
    );
    const { Name: name } = parameters;
    const input = JSON.stringify(parameters.Input);
    const answer = {
      ExecutionArn: `${LOCAL_LONG_WAITS_STATE_MACHINE_ARN}:${name}`,
      StartDate: new Date().toISOString(),
    };
    const known = this.longWaits.get(name);
    if (known !== undefined) {
      if (known.running && known.input === input) return answer;
      throw new ExecutionAlreadyExistsError(name);
    }
    this.longWaits.set(name, { input, running: true });
    const state = parameters.Input as LifecycleStart & Record<string, unknown>;
    if (!this.stopped) this.enqueue({ name, type: 'STANDARD', start: state, input: state });
    return answer;
  }

  private enqueue(queued: Queued): void {
    const transfer = transferOf(queued.start);
    this.perTransfer.set(transfer, (this.perTransfer.get(transfer) ?? 0) + 1);
    this.pending.push(queued.start.tenant, this.sequence++, queued);
    this.runPending();
  }

  private finished(start: LifecycleStart): void {
    const transfer = transferOf(start);
    const left = (this.perTransfer.get(transfer) ?? 1) - 1;
    if (left > 0) this.perTransfer.set(transfer, left);
    else {
      this.perTransfer.delete(transfer);
      this.startNumbers.delete(transfer);
    }
  }

  /** Called on every start, every execution that finishes or waits, and, while any wait, on a short timer. */
  private runPending(): void {
    const limit = this.apiQuiet()
      ? (this.options.maxRunningWhenQuiet ?? DEFAULT_MAX_RUNNING_WHEN_QUIET)
      : (this.options.maxRunning ?? DEFAULT_MAX_RUNNING);
    while (!this.stopped && this.runnable < limit) {
      const next = this.pending.shift();
      if (!next) break;
      this.run(next);
    }
    if (this.pending.size > 0) {
      // Unref'd: a timer alone must not keep the process alive.
      this.recheck ??= setInterval(() => this.runPending(), LIMIT_RECHECK_MS).unref();
    } else if (this.recheck) {
      clearInterval(this.recheck);
      this.recheck = undefined;
    }
  }

  private run({ name, type, start, input }: Queued): void {
    const transfer = transferOf(start);
    if (!this.startNumbers.has(transfer)) this.startNumbers.set(transfer, this.sequence++);
    const startedAt = new Date().toISOString();
    const arn = type === 'EXPRESS' ? LOCAL_STATE_MACHINE_ARN : LOCAL_LONG_WAITS_STATE_MACHINE_ARN;
    // Outside the context of whatever started it (an HTTP request): the execution is no part of it.
    const execution = inOwnContext(undefined, name, () =>
      this.machines[type].run(input as Parameters<StateMachine['run']>[0], {
        overrides: this.overrides[type],
        noThrowOnAbort: true,
        context: { Execution: { Id: `${arn}:${name}`, Name: name } },
      }),
    );
    const key = `${type}:${name}:${this.runs++}`;
    this.runnable++;

    let entered = 0;
    let taskStates = 0;
    let retries = 0;
    let aborted = false;
    let inWait = false;
    const counted = (async () => {
      for await (const event of execution.eventLogs) {
        if (event.type === 'StateEntered') {
          entered += 1;
          if (event.state.type === 'Task') taskStates += 1;
          if (event.state.type === 'Wait' && !inWait) {
            // Waiting needs no slot: another execution may run meanwhile.
            inWait = true;
            this.runnable--;
            this.runPending();
          }
        } else if (event.type === 'StateExited' && event.state.type === 'Wait' && inWait) {
          // Runnable again, even above the limit for a moment: its tasks still wait for a task slot.
          inWait = false;
          this.runnable++;
        } else if (event.type === 'StateRetried') retries += 1;
        else if (event.type === 'ExecutionAborted') aborted = true;
      }
    })();
    const done = execution.result
      .then(
        () => ({ status: aborted ? ('ABORTED' as const) : ('SUCCEEDED' as const) }),
        (error: unknown) => ({
          status: 'FAILED' as const,
          error: error instanceof Error ? error.message : String(error),
        }),
      )
      .then(async (outcome) => {
        await counted;
        const summary: ExecutionSummary = {
          name,
          type,
          tenant: start.tenant,
          paymentId: start.paymentId,
          trigger: start.trigger,
          status: aborted ? 'ABORTED' : outcome.status,
          transitions: entered + retries,
          retries,
          taskStates,
          startedAt,
          stoppedAt: new Date().toISOString(),
          ...('error' in outcome && { error: outcome.error }),
        };
        if (summary.status === 'FAILED') {
          // As on AWS: the execution fails, the transfer stays due and the reconciler drives it on.
          logger.warn('Lifecycle execution failed', { executionName: name, error: summary.error });
        }
        this.options.onExecution?.(summary);
        if (this.options.executionsFile) {
          await appendFile(this.options.executionsFile, `${JSON.stringify(summary)}\n`, {
            mode: 0o600,
          }).catch(() => undefined);
        }
      })
      .finally(() => {
        if (!inWait) this.runnable--;
        this.running.delete(key);
        const longWait = type === 'STANDARD' ? this.longWaits.get(name) : undefined;
        if (longWait) longWait.running = false;
        this.finished(start);
        this.runPending();
      });
    this.running.set(key, { abort: execution.abort, done });
  }

  /** Executions running now, not counting those in a Wait state. */
  get inFlight(): number {
    return this.runnable;
  }

  /** Executions in a Wait state (a value date, a clearing poll). */
  get waiting(): number {
    return this.running.size - this.runnable;
  }

  /** Executions started but waiting for a free slot. */
  get queued(): number {
    return this.pending.size;
  }

  /** Resolves once no execution runs or waits (including those started meanwhile). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.pending.size > 0) {
      await Promise.all([...this.running.values()].map((run) => run.done));
    }
  }

  /**
   * Aborts every running execution and drops those waiting; the next start's reconciler resumes
   * their transfers, which stay due in the table.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pending.clear();
    for (const run of this.running.values()) run.abort();
    await this.idle();
  }
}
