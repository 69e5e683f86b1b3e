import { LambdaClient } from '@aws-sdk/client-lambda';
import { callConfig, FUNCTION_CALLS, lazily, serviceClient } from './aws-clients.ts';

/** The container's one Lambda client, made at its first use. */
export const lambdaClient = lazily(() => serviceClient(new LambdaClient(callConfig(FUNCTION_CALLS))));
