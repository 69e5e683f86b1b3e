import { AsyncLocalStorage } from 'node:async_hooks';
import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
import { withoutInvocationDeadline } from '#shared/deadline';
import { metered } from './invocation-meter.ts';

/**
 * Locally every function runs in one process, many invocations at once: HTTP requests, the
 * authorizer, workflow tasks, reconciler runs. Powertools keeps what an invocation appends to the
 * logger (tenant, client, paymentId, step) per invocation in Lambda's InvokeStore when
 * AWS_LAMBDA_MAX_CONCURRENCY is set, as on a Lambda environment that serves several at once;
 * otherwise those keys are shared by the whole process and one request's lines carry another's.
 * So the local runtime sets it and runs each invocation in a context of its own.
 */
let store: InvokeStoreBase | undefined;

/** Before any handler runs: from now on each invocation keeps its own log context. */
export const useInvocationContexts = async (): Promise<void> => {
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1024';
  store = await InvokeStore.getInstanceAsync(true);
};

/** Which function of the stack runs the current invocation (its IAM role is that function's). */
const runningFunction = new AsyncLocalStorage<string>();

/** The function (as the stack names it: `Authorizer`, `IssueToken`, `Reconciler`...) whose invocation this is. */
export const currentFunction = (): string | undefined => runningFunction.getStore();

/**
 * Runs `invocation` of the stack's function `functionName` in a context of its own, under its
 * Lambda request id, with no deadline but its own (a workflow execution started by an HTTP
 * request must not inherit the request's). A call that is no function's (an execution of the
 * state machine) passes `undefined`. `functionEntry`: the handler entry of the function invoked,
 * for the benchmark's meter.
 */
export const inOwnContext = <T>(
  functionName: string | undefined,
  requestId: string,
  invocation: () => T,
  functionEntry?: string,
): T =>
  runningFunction.run(functionName as string, () =>
    withoutInvocationDeadline(() =>
      metered(functionEntry, () =>
        store === undefined
          ? invocation()
          : store.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: requestId }, invocation),
      ),
    ),
  );

/** The name the stack gives a route's function: its operationId, capitalised. */
export const functionNameOf = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);
