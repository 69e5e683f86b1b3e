import { KMSClient } from '@aws-sdk/client-kms';
import { callConfig, FUNCTION_CALLS, lazily, serviceClient } from './aws-clients.ts';

/** The container's one KMS client (token signing, the list cursor key), made at its first use. */
export const kmsClient = lazily(() => serviceClient(new KMSClient(callConfig(FUNCTION_CALLS))));
