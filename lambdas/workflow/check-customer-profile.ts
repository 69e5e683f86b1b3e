import { checkCustomerProfile } from '#domain/lifecycle-steps';
import { workflowDependencies } from './dependencies.ts';
import { lifecycleTask } from './task.ts';

/** Task state: AcceptedTechnicalValidation -> AcceptedCustomerProfile, or Rejected, after the rail's checks. */
export const handler = lifecycleTask('checkCustomerProfile', (state) =>
  checkCustomerProfile(workflowDependencies(), state),
);
