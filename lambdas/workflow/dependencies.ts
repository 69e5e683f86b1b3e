import { DynamoDbLifecycleStore } from '#adapters/credit-transfer-lifecycle-store';
import { documentClient, tableName } from '#adapters/dynamodb-client';
import { EventBridgeStatusEventPublisher, eventBridgeClient } from '#adapters/event-publisher';
import { JsonLinesStatusEventPublisher } from '#adapters/event-publisher-local';
import { railFromEnvironment } from '#adapters/rail';
import { workflowStarter } from '#adapters/workflow-starter';
import { DEFAULT_LIFECYCLE_SETTINGS, type LifecycleSettings } from '#domain/lifecycle-steps';
import {
  type Clock,
  type Rail,
  type StatusEventPublisher,
  systemClock,
  type WorkflowStarter,
} from '#domain/ports';
import { optionalEnv, requiredEnv } from '#shared/config';

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
  publisher: StatusEventPublisher;
  workflow: WorkflowStarter;
}

let wired: WorkflowDependencies | undefined;

/**
 * The real adapters, built once per container on first use. Status events go to the
 * EventBridge bus EVENT_BUS_NAME, or to the JSON-lines file EVENTS_FILE (local runtime).
 */
export const workflowDependencies = (): WorkflowDependencies => {
  if (wired) return wired;
  const client = documentClient();
  const table = tableName();
  const eventsFile = optionalEnv('EVENTS_FILE');
  let publisher: StatusEventPublisher | undefined;
  wired = {
    store: new DynamoDbLifecycleStore(client, table),
    rail: railFromEnvironment(client, table, systemClock),
    clock: systemClock,
    settings: lifecycleSettings(),
    // Built on first use: only the publishing function knows the bus.
    get publisher() {
      publisher ??=
        eventsFile !== undefined
          ? new JsonLinesStatusEventPublisher(eventsFile)
          : new EventBridgeStatusEventPublisher(eventBridgeClient(), requiredEnv('EVENT_BUS_NAME'));
      return publisher;
    },
    // Resolved at each start, so a starter registered by the local runtime is always the one used.
    workflow: { start: (start) => workflowStarter().start(start) },
  };
  return wired;
};
