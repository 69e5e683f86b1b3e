import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './logger.ts';

/**
 * X-Ray tracing of each invocation. Every AWS SDK client is captured (lambdas/adapters/aws-clients.ts),
 * so each call is a subsegment named by its operation (DynamoDB.PutItem); connector requests go
 * through fetch, captured per request. Powertools turns it off outside Lambda (no
 * AWS_EXECUTION_ENV), so the local runtime and the tests send nothing.
 */
export const tracer = new Tracer({ serviceName: SERVICE_NAME });
