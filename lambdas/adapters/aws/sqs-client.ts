import { SQSClient } from '@aws-sdk/client-sqs';
import { callConfig, FUNCTION_CALLS, lazily, serviceClient } from './aws-clients.ts';

/** The container's one SQS client, made at its first use. */
export const sqsClient = lazily(() => serviceClient(new SQSClient(callConfig(FUNCTION_CALLS))));
