import { validateTechnically } from '#domain/lifecycle-steps';
import { workflowDependencies } from './dependencies.ts';
import { lifecycleTask } from './task.ts';

/** Task state: Received -> AcceptedTechnicalValidation, or Rejected. */
export const handler = lifecycleTask('validateTechnically', (state) =>
  validateTechnically(workflowDependencies(), state),
);
