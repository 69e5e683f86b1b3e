import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { callConfig, FUNCTION_CALLS, lazily, serviceClient } from './aws-clients.ts';

/** The container's one EventBridge client, made at its first use. */
export const eventBridgeClient = lazily(() =>
  serviceClient(new EventBridgeClient(callConfig(FUNCTION_CALLS))),
);
