import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The lifecycle's two state machines, each defined once in its ASL file: CDK deploys them with
 * DefinitionSubstitutions for the function ARNs (and the fast path's for the machine of long
 * waits), the local runtime runs them with aws-local-stepfunctions and the same handlers
 * in-process. Every transfer starts on the fast path (EXPRESS); only a long wait (a value-date
 * hold, clearing slower than the fast poll budget) is handed over to the STANDARD one.
 */
export const LIFECYCLE_ASL_FILE = 'lambdas/workflow/credit-transfer-lifecycle.asl.json';
export const LONG_WAITS_ASL_FILE = 'lambdas/workflow/credit-transfer-lifecycle-waits.asl.json';
/** The fast path's placeholder for the ARN of the state machine of long waits. */
export const LONG_WAITS_SUBSTITUTION = 'LongWaitsStateMachineArn';
/** The fast path's Task state that starts the execution of long waits. */
export const HAND_OVER_STATE = 'HandOverToLongWaits';

export interface WorkflowFunction {
  /** The `${...}` placeholder of its Task states' Resource. */
  substitution: string;
  /** Handler source file, relative to the project root; it exports `handler`. */
  entry: string;
  description: string;
}

/** Every Task resource of the ASL file, and the handler that serves it. */
export const WORKFLOW_FUNCTIONS = {
  validateCheckAndSubmit: {
    substitution: 'ValidateCheckAndSubmitFunctionArn',
    entry: 'lambdas/workflow/validate-check-and-submit.ts',
    description: 'Lifecycle: technical validation, customer profile checks and submission to clearing',
  },
  submitToClearing: {
    substitution: 'SubmitToClearingFunctionArn',
    entry: 'lambdas/workflow/submit-to-clearing.ts',
    description: 'Lifecycle: submission to clearing after a value-date hold',
  },
  pollClearing: {
    substitution: 'PollClearingFunctionArn',
    entry: 'lambdas/workflow/poll-clearing.ts',
    description: 'Lifecycle: clearing outcome (settlement, rejection, recall)',
  },
  publishStatusEvents: {
    substitution: 'PublishStatusEventsFunctionArn',
    entry: 'lambdas/workflow/publish-status-events.ts',
    description: 'Lifecycle: publishes status change events',
  },
  parkTransfer: {
    substitution: 'ParkTransferFunctionArn',
    entry: 'lambdas/workflow/park-transfer.ts',
    description: 'Lifecycle: the catch-all; parks a transfer for an operator after its last attempt',
  },
} as const satisfies Record<string, WorkflowFunction>;

/** The reconciler: started by a schedule, not by the state machine. */
export const RECONCILER_ENTRY = 'lambdas/workflow/reconcile.ts';

/** Starts a stored batch's lifecycles: invoked asynchronously by the batch request. */
export const BATCH_LIFECYCLES_ENTRY = 'lambdas/workflow/start-batch-lifecycles.ts';

export type AslDefinition = {
  StartAt: string;
  States: Record<string, { Type: string; Resource?: string; [field: string]: unknown }>;
  [field: string]: unknown;
};

export const readLifecycleDefinition = (projectRoot: string): AslDefinition =>
  JSON.parse(readFileSync(join(projectRoot, LIFECYCLE_ASL_FILE), 'utf8'));

export const readLongWaitsDefinition = (projectRoot: string): AslDefinition =>
  JSON.parse(readFileSync(join(projectRoot, LONG_WAITS_ASL_FILE), 'utf8'));

/** The placeholder name of a Task state's Resource (`${Name}`), or undefined. */
export const substitutionOf = (resource: string | undefined): string | undefined =>
  /^\$\{(\w+)\}$/.exec(resource ?? '')?.[1];
