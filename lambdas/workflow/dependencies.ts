import { DynamoDbLifecycleStore } from '#adapters/credit-transfer-lifecycle-store';
import { documentClient, tableName } from '#adapters/dynamodb-client';
import { railFromEnvironment } from '#adapters/rail';
import { DEFAULT_LIFECYCLE_SETTINGS, type LifecycleSettings } from '#domain/lifecycle-settings';
import { type Clock, type Rail, systemClock } from '#domain/ports';
import { optionalEnv } from '#shared/config';

const wholeNumber = (name: string, fallback: number, minimum: number): number => {
  const value = optionalEnv(name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < minimum) {
    throw new Error(`${name} must be a whole number, at least ${minimum}; got ${value}`);
  }
  return parsed;
};

/** Polling settings from the environment, each with a default (see docs/lifecycle.md). */
export const lifecycleSettings = (): LifecycleSettings => ({
  pollInitialSeconds: wholeNumber(
    'CLEARING_POLL_INITIAL_SECONDS',
    DEFAULT_LIFECYCLE_SETTINGS.pollInitialSeconds,
    0,
  ),
  pollMaxIntervalSeconds: wholeNumber(
    'CLEARING_POLL_MAX_INTERVAL_SECONDS',
    DEFAULT_LIFECYCLE_SETTINGS.pollMaxIntervalSeconds,
    1,
  ),
  pollMaxAttempts: wholeNumber('CLEARING_POLL_MAX_ATTEMPTS', DEFAULT_LIFECYCLE_SETTINGS.pollMaxAttempts, 1),
  maxHoldSeconds: wholeNumber('LIFECYCLE_MAX_HOLD_SECONDS', DEFAULT_LIFECYCLE_SETTINGS.maxHoldSeconds, 60),
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
