import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { callConfig, FUNCTION_CALLS, lazily, serviceClient } from './aws-clients.ts';

/** The container's one Secrets Manager client, made at its first use. */
export const secretsManagerClient = lazily(() =>
  serviceClient(new SecretsManagerClient(callConfig(FUNCTION_CALLS))),
);
