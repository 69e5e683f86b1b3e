import { publishStatusEvents } from '#domain/lifecycle-steps';
import { workflowDependencies } from './dependencies.ts';
import { statusEventPublisher } from './status-events.ts';
import { lifecycleTask } from './task.ts';

/** Task state: publishes the status changes not yet published (its result is discarded: ResultPath null). */
export const handler = lifecycleTask('publishStatusEvents', (state) =>
  publishStatusEvents({ ...workflowDependencies(), publisher: statusEventPublisher() }, state),
);
