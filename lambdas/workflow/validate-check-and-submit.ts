import { validateCheckAndSubmit } from '#domain/credit-transfers/lifecycle-steps';
import { workflowDependencies } from './dependencies.ts';
import { lifecycleTask } from './task.ts';

/**
 * Task state: Received -> AcceptedTechnicalValidation -> AcceptedCustomerProfile ->
 * AcceptedSettlementInProcess (unless the value date is ahead), or Rejected, or Cancelled.
 */
export const handler = lifecycleTask('validateCheckAndSubmit', (state) =>
  validateCheckAndSubmit(workflowDependencies(), state),
);
