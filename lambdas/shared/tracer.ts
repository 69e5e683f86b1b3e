import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './logger.ts';

/**
 * X-Ray tracing of each invocation. Every AWS call and connector request goes through fetch,
 * which the tracer captures as a subsegment per request (named by the service's host).
 * Powertools turns it off outside Lambda (no AWS_EXECUTION_ENV), so the local runtime and the
 * tests send nothing.
 */
export const tracer = new Tracer({ serviceName: SERVICE_NAME });
