import { publishStatusEvents } from '#domain/credit-transfers/lifecycle-steps';
import { workflowDependencies } from './dependencies.ts';
import { statusEventPublisher } from './status-events.ts';
import { lifecycleTask } from './task.ts';

/** Task state: publishes the status changes the state carries; its output is the state, noted as published. */
export const handler = lifecycleTask('publishStatusEvents', (state) =>
  publishStatusEvents({ ...workflowDependencies(), publisher: statusEventPublisher() }, state),
);
