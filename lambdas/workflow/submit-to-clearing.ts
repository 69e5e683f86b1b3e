import { submitToClearing } from '#domain/credit-transfers/lifecycle-steps';
import { workflowDependencies } from './dependencies.ts';
import { lifecycleTask } from './task.ts';

/** Task state: AcceptedCustomerProfile -> AcceptedSettlementInProcess, once clearing has the payment. */
export const handler = lifecycleTask('submitToClearing', (state) =>
  submitToClearing(workflowDependencies(), state),
);
