/**
 * Each function's memory in MB, by its handler entry: the one place it is set (ServiceFunction
 * reads it). Chosen by `npm run bench -- memory` (scripts/bench/memory.ts), which runs every API
 * and workflow function at 128 to 3,538 MB of CPU share and prints the cheapest size whose warm
 * and cold durations are within their bounds of the fastest, and whether this table agrees
 * (docs/decisions.md, "Memory and cold start"). On Lambda more memory is more CPU.
 */
export const DEFAULT_MEMORY_MB = 1024;

export const FUNCTION_MEMORY_MB: Readonly<Record<string, number>> = {
  // The client-secret check's two scrypt derivations: as fast again as at 1,024 MB, and cheaper.
  'lambdas/auth/issue-token.ts': 1769,
  // The events list: 27 ms warm at 1,024 MB against 16.5 ms here, in two runs, for 4 % more per invocation.
  'lambdas/api/list-events.ts': 1769,
  // Answers from memory in under a millisecond at any size; 512 MB keeps the cold start near a second.
  'lambdas/auth/key-set.ts': 512,
  'lambdas/auth/openid-configuration.ts': 512,
  'lambdas/api/openapi-document.ts': 512,
  'lambdas/api/reference-page.ts': 512,
  'lambdas/api/reference-page-script.ts': 512,
  // Calls AWS on every invocation: the SDK's signing and parsing, middy, zod and the logger take
  // 6-20 ms of CPU each time, so below 1,024 MB they are slower and cost as much or more.
  'lambdas/auth/authorizer.ts': 1024,
  'lambdas/api/list-credit-transfers.ts': 1024,
  'lambdas/api/initiate-credit-transfer.ts': 1024,
  'lambdas/api/get-credit-transfer-status.ts': 1024,
  'lambdas/api/cancel-credit-transfer.ts': 1024,
  'lambdas/api/create-webhook-endpoint.ts': 1024,
  'lambdas/api/list-webhook-endpoints.ts': 1024,
  'lambdas/api/get-webhook-endpoint.ts': 1024,
  'lambdas/api/delete-webhook-endpoint.ts': 1024,
  'lambdas/api/rotate-webhook-secret.ts': 1024,
  'lambdas/api/list-webhook-deliveries.ts': 1024,
  'lambdas/api/redeliver-webhook-events.ts': 1024,
  'lambdas/workflow/validate-check-and-submit.ts': 1024,
  'lambdas/workflow/submit-to-clearing.ts': 1024,
  'lambdas/workflow/poll-clearing.ts': 1024,
  'lambdas/workflow/publish-status-events.ts': 1024,
  'lambdas/workflow/park-transfer.ts': 1024,
  'lambdas/workflow/reconcile.ts': 1024,
  'lambdas/webhooks/ingest-status-events.ts': 1024,
  // Not measured: its attempts are the same work as the queue reader's first attempts.
  'lambdas/webhooks/deliver-due-webhooks.ts': 1024,
  // Not measured: a pain.001 of up to 5 MB is parsed in memory, and a batch's transfers read back.
  'lambdas/api/submit-credit-transfer-batch.ts': 1024,
  'lambdas/api/get-credit-transfer-batch.ts': 1024,
  'lambdas/workflow/start-batch-lifecycles.ts': 1024,
};

/** The memory of the function whose handler is `entry`. */
export const memoryOf = (entry: string): number => FUNCTION_MEMORY_MB[entry] ?? DEFAULT_MEMORY_MB;
