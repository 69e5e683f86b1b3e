import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type LambdaTimeLeft, withInvocationDeadline } from './deadline.ts';
import { logger } from './logger.ts';
import { flushMetrics } from './metrics.ts';
import { tracer } from './tracer.ts';

/** What identifies a request in its log lines: never the headers, the body or the query values. */
const requestKeys = (event: APIGatewayProxyEvent): Record<string, string> => {
  const { requestId, authorizer } = event.requestContext ?? {};
  const keys: Record<string, string | undefined> = {
    requestId,
    tenant: authorizer?.tenant,
    clientId: authorizer?.clientId,
    paymentId: event.pathParameters?.paymentId,
  };
  return Object.fromEntries(
    Object.entries(keys).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
};

/**
 * One log line per request (method, resource, status, duration) carrying the request id, tenant,
 * client id and paymentId where known; the metrics the request stored are published at its end.
 */
const requestLog = <E extends APIGatewayProxyEvent>(): MiddlewareObj<E, APIGatewayProxyResult> => {
  let started = 0;
  const done = (request: { event: E; response: APIGatewayProxyResult | undefined | null }) => {
    const statusCode = request.response?.statusCode;
    const line = {
      method: request.event.httpMethod,
      resource: request.event.resource,
      statusCode,
      durationMs: Math.round(performance.now() - started),
    };
    if (statusCode !== undefined && statusCode >= 500) logger.error('Request failed', line);
    else logger.info('Request handled', line);
    flushMetrics();
  };
  return {
    before: async (request) => {
      started = performance.now();
      logger.appendKeys(requestKeys(request.event));
    },
    after: async (request) => done(request),
    onError: async (request) => done(request),
  };
};

/**
 * The observability every HTTP handler shares, outermost first: trace, log context, request log.
 * The request log runs on the way out after the problem mapping, so it sees the final status.
 */
export const observedHttp = <E extends APIGatewayProxyEvent>(): MiddlewareObj<E, APIGatewayProxyResult>[] => [
  // The answer is not put in the trace: it holds account numbers the logs mask, and serializing a
  // large one (the reference page's script) was 300 ms of that function's cold start.
  ...(tracer === undefined
    ? []
    : [captureLambdaHandler(tracer, { captureResponse: false }) as MiddlewareObj<E, APIGatewayProxyResult>]),
  injectLambdaContext(logger, { resetKeys: true }) as MiddlewareObj<E, APIGatewayProxyResult>,
  requestLog<E>(),
];

/**
 * The same for a function that is no HTTP handler (the authorizer, the workflow tasks, the
 * reconciler): a trace segment, the Lambda context and `keys` on every log line, metrics flushed
 * at the end, whatever the outcome.
 */
export const observed =
  <E, R>(handler: (event: E) => Promise<R>, keys: (event: E) => Record<string, unknown> = () => ({})) =>
  (event: E, context?: { awsRequestId?: string } & LambdaTimeLeft): Promise<R> =>
    withInvocationDeadline(context, () => observedRun(handler, keys, event, context));

const observedRun = async <E, R>(
  handler: (event: E) => Promise<R>,
  keys: (event: E) => Record<string, unknown>,
  event: E,
  context: { awsRequestId?: string } | undefined,
): Promise<R> => {
  logger.resetKeys();
  if (context !== undefined) logger.addContext(context as Parameters<typeof logger.addContext>[0]);
  logger.appendKeys(keys(event) as Parameters<typeof logger.appendKeys>[0]);
  // The function's own segment is Lambda's; the handler gets a subsegment, as captureLambdaHandler does.
  const segment = tracer?.isTracingEnabled() ? tracer.getSegment() : undefined;
  const subsegment = segment?.addNewSubsegment(`## ${process.env._HANDLER ?? 'handler'}`);
  if (subsegment) {
    tracer?.setSegment(subsegment);
    tracer?.annotateColdStart();
  }
  try {
    return await handler(event);
  } catch (error) {
    subsegment?.addError(error as Error);
    throw error;
  } finally {
    flushMetrics();
    if (segment && subsegment) {
      subsegment.close();
      tracer?.setSegment(segment);
    }
  }
};
