import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbLifecycleStore } from '#adapters/credit-transfers/credit-transfer-lifecycle-store';
import { railFromEnvironment } from '#adapters/credit-transfers/rail';
import { DynamoDbLimitCounters } from '#adapters/payment-controls/limit-counters';
import { type Clock, systemClock } from '#domain/commons/ports';
import {
  DEFAULT_LIFECYCLE_SETTINGS,
  type LifecycleSettings,
} from '#domain/credit-transfers/lifecycle-settings';
import type { Rail } from '#domain/credit-transfers/ports';
import { wholeNumberEnv } from '#shared/config';

/** Polling settings from the environment, each with a default (see docs/lifecycle.md). */
export const lifecycleSettings = (): LifecycleSettings => ({
  pollInitialSeconds: wholeNumberEnv(
    'CLEARING_POLL_INITIAL_SECONDS',
    DEFAULT_LIFECYCLE_SETTINGS.pollInitialSeconds,
    { min: 0 },
  ),
  pollMaxIntervalSeconds: wholeNumberEnv(
    'CLEARING_POLL_MAX_INTERVAL_SECONDS',
    DEFAULT_LIFECYCLE_SETTINGS.pollMaxIntervalSeconds,
    { min: 1 },
  ),
  pollMaxAttempts: wholeNumberEnv('CLEARING_POLL_MAX_ATTEMPTS', DEFAULT_LIFECYCLE_SETTINGS.pollMaxAttempts, {
    min: 1,
  }),
  // Within Express's 5 minutes, with room left for the steps' retries.
  fastPollSeconds: wholeNumberEnv('CLEARING_FAST_POLL_SECONDS', DEFAULT_LIFECYCLE_SETTINGS.fastPollSeconds, {
    min: 0,
    max: 180,
  }),
  maxHoldSeconds: wholeNumberEnv('LIFECYCLE_MAX_HOLD_SECONDS', DEFAULT_LIFECYCLE_SETTINGS.maxHoldSeconds, {
    min: 60,
  }),
  maxAttempts: wholeNumberEnv('LIFECYCLE_MAX_ATTEMPTS', DEFAULT_LIFECYCLE_SETTINGS.maxAttempts, {
    min: 1,
    max: 100,
  }),
  submissionLeaseSeconds: wholeNumberEnv(
    'SUBMISSION_LEASE_SECONDS',
    DEFAULT_LIFECYCLE_SETTINGS.submissionLeaseSeconds,
    { min: 1, max: 3600 },
  ),
});

export interface WorkflowDependencies {
  store: DynamoDbLifecycleStore;
  rail: Rail;
  clock: Clock;
  settings: LifecycleSettings;
}

let wired: WorkflowDependencies | undefined;

/**
 * The table and the rail, built once per container on first use. The publisher and the workflow
 * starter are not here: only the functions that use them load their clients (status-events.ts,
 * reconcile.ts).
 */
export const workflowDependencies = (): WorkflowDependencies => {
  if (wired) return wired;
  const client = documentClient();
  const table = tableName();
  let rail: Rail | undefined;
  wired = {
    store: new DynamoDbLifecycleStore(client, table),
    // Built on first use: only the steps that call the rail are given the connector's settings.
    get rail() {
      rail ??= railFromEnvironment(client, table, systemClock);
      return rail;
    },
    clock: systemClock,
    settings: lifecycleSettings(),
  };
  return wired;
};

let counters: DynamoDbLimitCounters | undefined;

/** The limit counters (the reconciler counts what an initiation left half done; the publish step gives back). */
export const limitCounters = (): DynamoDbLimitCounters => {
  counters ??= new DynamoDbLimitCounters(documentClient(), tableName());
  return counters;
};
