import { pollClearing } from '#domain/credit-transfers/lifecycle-steps';
import { workflowDependencies } from './dependencies.ts';
import { lifecycleTask } from './task.ts';

/** Task state: AcceptedSettlementInProcess -> the outcome clearing reports, or another poll. */
export const handler = lifecycleTask('pollClearing', (state) => pollClearing(workflowDependencies(), state));
