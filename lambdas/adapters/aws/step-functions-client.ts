import { SFNClient } from '@aws-sdk/client-sfn';
import { type AwsCallSettings, callConfig, FUNCTION_CALLS, lazily, serviceClient } from './aws-clients.ts';

/** The container's one Step Functions client, made at its first use. */
export const stepFunctionsClient = lazily(() => serviceClient(new SFNClient(callConfig(FUNCTION_CALLS))));

/**
 * Many starts in a row (a batch's): the SDK's adaptive retries, which slow this client down to
 * the rate Step Functions answers without throttling, and more attempts before one start fails.
 */
export const BULK_START_CALLS: AwsCallSettings = { ...FUNCTION_CALLS, retryMode: 'adaptive', maxAttempts: 8 };

/** The Step Functions client of a function that starts many executions at once. */
export const bulkStepFunctionsClient = lazily(() =>
  serviceClient(new SFNClient(callConfig(BULK_START_CALLS)), BULK_START_CALLS),
);
