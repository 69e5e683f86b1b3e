import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './logger.ts';

/**
 * X-Ray tracing of each invocation and of every AWS SDK call. Powertools turns it off outside
 * Lambda (no AWS_EXECUTION_ENV), so the local runtime and the tests send nothing.
 */
export const tracer = new Tracer({ serviceName: SERVICE_NAME });

/** Every AWS SDK client goes through here: its calls become subsegments of the invocation. */
export const traced = <T>(client: T): T => tracer.captureAWSv3Client(client);
