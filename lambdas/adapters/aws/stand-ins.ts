/**
 * The local runtime stands in for some AWS services without an SDK client: key files for KMS, the
 * events file for EventBridge, its own workflow runner for Step Functions, the delivery worker's
 * look at the table for SQS, an in-process run for Lambda's asynchronous invocation. Each stand-in asks here before it acts, as an SDK client's middleware
 * is asked before it sends, so the local IAM check sees those calls too. On AWS nothing is
 * registered and nothing here runs.
 */

/** Which stack resource a stand-in plays: the environment variable that names it to a function on AWS. */
export type StandInResource =
  | 'SIGNING_KEY_IDS'
  | 'LIST_CURSOR_KEY_ID'
  | 'WEBHOOK_SECRET_KEY_ID'
  | 'EVENT_BUS_NAME'
  | 'STATE_MACHINE_ARN'
  /** The lifecycle's state machine of long waits, which the fast path starts (its role's grant). */
  | 'LongWaitsStateMachineArn'
  | 'WEBHOOK_WAKE_UP_QUEUE_URL'
  /** The function that starts a batch's lifecycles, invoked asynchronously (lambda:InvokeFunction). */
  | 'BATCH_LIFECYCLES_FUNCTION'
  /** The lifecycle's publish step function, invoked asynchronously to announce a held transfer (lambda:InvokeFunction). */
  | 'PUBLISH_STATUS_EVENTS_FUNCTION'
  /** The queue the calling function's event source mapping reads (Lambda polls it with the function's role). */
  | 'EVENT_SOURCE_QUEUE';

export interface StandInCall {
  /** As IAM names it: `kms:Decrypt`, `events:PutEvents`, `states:StartExecution`, `sqs:SendMessage`, `lambda:InvokeFunction`. */
  action: string;
  resource: StandInResource;
  /** The condition keys AWS sets for the call (`kms:EncryptionContext:*`, `events:source`...). */
  context?: Record<string, string | string[]>;
}

export interface StandInChecks {
  /** Throws the service's AccessDeniedException, as its SDK client would, when IAM denies the call. */
  check(call: StandInCall): Promise<void>;
  /** The function whose invocation runs now: what a container of its own would be on AWS. */
  scope(): string;
}

let registered: StandInChecks | undefined;

/** The local runtime, before any handler runs. */
export const useStandInChecks = (checks: StandInChecks | undefined): void => {
  registered = checks;
};

export const checkStandInCall = async (call: StandInCall): Promise<void> => {
  await registered?.check(call);
};

/**
 * Locally every function runs in one process: what a container keeps (an opened secret, a key)
 * is kept per function here, so a function never uses what only another one could get.
 */
export const containerScope = (): string => registered?.scope() ?? '';
