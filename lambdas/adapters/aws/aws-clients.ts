import type { Agent } from 'node:http';
import { isThrottlingError, isTransientError } from '@smithy/core/retry';
import { invocationDeadline } from '#shared/deadline';
import { ServiceUnavailableError } from '#shared/service-unavailable';
import { tracer } from '#shared/tracer';

/**
 * How every AWS SDK client of the service calls AWS: the SDK's own clients, with timeouts on
 * each attempt, the SDK's standard retries (with their retry budget), and a deadline on each
 * call as a whole, retries included, from the Lambda invocation's remaining time.
 */
export interface AwsCallSettings {
  /** Until the connection is open. */
  readonly connectionTimeoutMs: number;
  /** One attempt, until the answer's headers; also the longest silence while its body arrives. */
  readonly requestTimeoutMs: number;
  /** Attempts per call, the first included. */
  readonly maxAttempts: number;
  readonly retryMode: 'standard' | 'adaptive';
  /** Time kept back from the invocation's remaining time to answer and log a failure. */
  readonly deadlineMarginMs: number;
  /** The most one call may take outside an invocation (scripts, the local workflow). */
  readonly callBudgetMs: number;
}

/** In a Lambda function: AWS answers in milliseconds; a silent attempt is given up early and retried. */
export const FUNCTION_CALLS: AwsCallSettings = {
  connectionTimeoutMs: 1_000,
  requestTimeoutMs: 3_000,
  maxAttempts: 4,
  retryMode: 'standard',
  deadlineMarginMs: 1_000,
  callBudgetMs: 30_000,
};

/** Against the local table: a loaded dynalite answers slowly, and an attempt given up on may have been written. */
export const LOCAL_CALLS: AwsCallSettings = {
  connectionTimeoutMs: 5_000,
  requestTimeoutMs: 30_000,
  maxAttempts: 5,
  retryMode: 'standard',
  deadlineMarginMs: 1_000,
  callBudgetMs: 120_000,
};

/** The client configuration that carries the settings (the SDK's NodeHttpHandler options). */
export const callConfig = (settings: AwsCallSettings, httpAgent?: Agent) => ({
  maxAttempts: settings.maxAttempts,
  retryMode: settings.retryMode,
  requestHandler: {
    connectionTimeout: settings.connectionTimeoutMs,
    requestTimeout: settings.requestTimeoutMs,
    // Without it the SDK only logs a warning when requestTimeout passes.
    throwOnRequestTimeout: true,
    socketTimeout: settings.requestTimeoutMs,
    ...(httpAgent !== undefined && { httpAgent }),
  },
});

/** The end of the time one call may take: the invocation's, less the margin, or the call budget. */
const callDeadline = (settings: AwsCallSettings): number =>
  Math.min(
    Date.now() + settings.callBudgetMs,
    (invocationDeadline() ?? Number.POSITIVE_INFINITY) - settings.deadlineMarginMs,
  );

interface SdkErrorShape {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number; requestId?: string };
  $response?: { statusCode?: number; headers?: Record<string, string | undefined> };
}

const requestIdOf = (error: SdkErrorShape): string | undefined =>
  error.$metadata?.requestId ??
  error.$response?.headers?.['x-amzn-requestid'] ??
  error.$response?.headers?.['x-amz-request-id'];

/** A 2xx whose body the SDK could not read: AWS said yes to something the service cannot see. */
const isUnreadableAnswer = (error: SdkErrorShape): boolean => {
  const status = error.$metadata?.httpStatusCode ?? error.$response?.statusCode;
  return status !== undefined && status >= 200 && status < 300;
};

const isServerFault = (error: SdkErrorShape): boolean => (error.$metadata?.httpStatusCode ?? 0) >= 500;

interface CallContext {
  clientName?: string;
  commandName?: string;
  __smithy_context?: { abortSignal?: AbortSignal };
}

/**
 * What a failed call means to the caller. Throttling past the retries, a 5xx, a network failure,
 * an unreadable answer and the deadline become ServiceUnavailableError (retry later); every
 * other error, ConditionalCheckFailedException among them, keeps its name and meaning.
 */
export const classifyFailure = (error: unknown, operation: string, aborted: boolean): unknown => {
  if (typeof error !== 'object' || error === null) return error;
  const sdkError = error as SdkErrorShape;
  const requestId = requestIdOf(sdkError);
  const reference = requestId === undefined ? '' : ` (request id ${requestId})`;
  if (aborted || sdkError.name === 'AbortError')
    return new ServiceUnavailableError(
      `${operation} did not finish within the time left to the invocation${reference}`,
      requestId,
      { cause: error },
    );
  if (isUnreadableAnswer(sdkError))
    return new ServiceUnavailableError(
      `${operation} answered a body that could not be read${reference}: ${sdkError.message ?? ''}`,
      requestId,
      { cause: error },
    );
  const failure = error as Parameters<typeof isTransientError>[0];
  if (isThrottlingError(failure) || isTransientError(failure) || isServerFault(sdkError))
    return new ServiceUnavailableError(
      `${operation} failed after its retries: ${sdkError.name ?? 'Error'} ${sdkError.message ?? ''}${reference}`,
      requestId,
      { cause: error },
    );
  return error;
};

/** "DynamoDBClient" and "PutItemCommand" make "DynamoDB.PutItem", as X-Ray and CloudTrail name it. */
const operationOf = (context: CallContext): string =>
  `${(context.clientName ?? 'AWS').replace(/Client$/, '')}.${(context.commandName ?? 'call').replace(/Command$/, '')}`;

/** A middleware of the SDK's stack, as this module adds them. */
export type SdkMiddleware = (
  next: (args: { input: Record<string, unknown> }) => Promise<unknown>,
  context: CallContext,
) => (args: { input: Record<string, unknown> }) => Promise<unknown>;

interface MiddlewareStack {
  add(
    middleware: SdkMiddleware,
    options: { step: 'initialize' | 'serialize'; name: string; priority: 'high' },
  ): void;
}

/**
 * Middleware every service client made from now on gets (at the serialize step, before the request
 * is built and sent). Only the local runtime adds one: its check of each call against the calling
 * function's IAM policies. Nothing on AWS sets it.
 */
const addedMiddleware: { name: string; middleware: SdkMiddleware }[] = [];
export const addToEveryClient = (name: string, middleware: SdkMiddleware): void => {
  addedMiddleware.push({ name, middleware });
};

/** The part of an SDK client this module uses: its middleware stack and its send. */
export interface SdkClient {
  middlewareStack: unknown;
  send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

/**
 * Outermost on the stack, outside the retries: it sees the call's final failure once.
 * Added to the service client; a document client built on it shares its stack.
 */
export const classifyFailures = (client: SdkClient): void => {
  (client.middlewareStack as MiddlewareStack).add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const aborted = context.__smithy_context?.abortSignal?.aborted === true;
        throw classifyFailure(error, operationOf(context), aborted);
      }
    },
    { step: 'initialize', name: 'serviceUnavailableFailures', priority: 'high' },
  );
};

/**
 * Every call of `client` gets an AbortSignal at the call's deadline: the SDK stops its backoff
 * and cuts the attempt in flight, its body included, when it fires.
 */
export const bindDeadline = <C extends SdkClient>(client: C, settings: AwsCallSettings): C => {
  const send = client.send.bind(client);
  client.send = ((command: unknown, options?: { abortSignal?: AbortSignal }) =>
    send(command, {
      abortSignal: AbortSignal.timeout(Math.max(0, callDeadline(settings) - Date.now())),
      ...options,
    })) as C['send'];
  return client;
};

/**
 * A service client as every function uses it: calls traced by X-Ray as subsegments named by
 * operation (where tracing is possible: see #shared/tracer), failures classified, each
 * call bound to its deadline.
 */
export const serviceClient = <C extends SdkClient>(
  client: C,
  settings: AwsCallSettings = FUNCTION_CALLS,
): C => {
  tracer?.captureAWSv3Client(client);
  classifyFailures(client);
  for (const { name, middleware } of addedMiddleware)
    (client.middlewareStack as MiddlewareStack).add(middleware, {
      step: 'serialize',
      name,
      priority: 'high',
    });
  return bindDeadline(client, settings);
};

/** One client per service per container, made at its first use (a function that never calls it pays nothing). */
export const lazily = <T>(create: () => T): (() => T) => {
  let made: T | undefined;
  return () => {
    made ??= create();
    return made;
  };
};
