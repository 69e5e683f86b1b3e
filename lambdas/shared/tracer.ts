import type { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './logger.ts';

/**
 * Powertools traces only in a Lambda function (AWS_EXECUTION_ENV set) whose
 * POWERTOOLS_TRACE_ENABLED is not false; everywhere else it turns itself off.
 */
const tracingPossible =
  (process.env.AWS_EXECUTION_ENV ?? '') !== '' &&
  process.env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false';

/**
 * X-Ray tracing of each invocation. Every AWS SDK client is captured (lambdas/adapters/aws/aws-clients.ts),
 * so each call is a subsegment named by its operation (DynamoDB.PutItem); connector requests go
 * through fetch, captured per request.
 *
 * Loaded only where tracing is possible: the Tracer brings the X-Ray SDK, whose evaluation is a
 * measured part of every cold start (docs/benchmarks.md). In the local runtime, the tests and a
 * function with tracing switched off it is undefined, and nothing is traced or loaded.
 */
export const tracer: Tracer | undefined = tracingPossible
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ serviceName: SERVICE_NAME })
  : undefined;
