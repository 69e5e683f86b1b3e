import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The time by which the current invocation must have answered: Lambda's remaining time when it
 * began. Held per invocation (not per process), since the local runtime runs many at once in
 * one process; outside an invocation (scripts, tests) there is none.
 */
export interface LambdaTimeLeft {
  getRemainingTimeInMillis?: () => number;
}

const invocation = new AsyncLocalStorage<number | undefined>();

/** Runs `work` with the deadline the Lambda context gives; without one, as it is. */
export const withInvocationDeadline = <T>(context: LambdaTimeLeft | undefined, work: () => T): T => {
  const remaining = context?.getRemainingTimeInMillis?.();
  if (remaining === undefined || !Number.isFinite(remaining)) return work();
  return invocation.run(Date.now() + remaining, work);
};

/**
 * Runs `work` as a new invocation would begin: without the deadline of the one it was called
 * from. The local runtime runs every invocation so, since work started by a request (a workflow
 * execution) outlives it.
 */
export const withoutInvocationDeadline = <T>(work: () => T): T => invocation.run(undefined, work);

/** A Lambda handler whose AWS calls end before the invocation does (see aws-clients.ts). */
export const deadlineBound =
  <E, C extends LambdaTimeLeft | undefined, R>(handler: (event: E, context: C) => Promise<R>) =>
  (event: E, context: C): Promise<R> =>
    withInvocationDeadline(context, () => handler(event, context));

/** Epoch milliseconds by which the current invocation ends, if it runs under one. */
export const invocationDeadline = (): number | undefined => invocation.getStore();
