import { SFNClient } from '@aws-sdk/client-sfn';
import { callConfig, FUNCTION_CALLS, lazily, serviceClient } from './aws-clients.ts';

/** The container's one Step Functions client, made at its first use. */
export const stepFunctionsClient = lazily(() => serviceClient(new SFNClient(callConfig(FUNCTION_CALLS))));
