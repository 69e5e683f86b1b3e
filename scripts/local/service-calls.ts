/**
 * The calls AWS services make on the stack's behalf, which the local runtime plays itself: a
 * state machine invoking its task functions, API Gateway invoking the authorizer and each route's
 * function, EventBridge sending status events to a queue, a schedule invoking its function. On
 * AWS each is authorized by the service's role or by the resource policy of what it calls; the
 * local IAM check (iam-enforcement.ts) registers here and checks them as it checks a function's
 * own calls. Nothing registered (LOCAL_IAM=off): nothing checked.
 */
export type ServiceCall =
  /** A Task state of the fast path (EXPRESS) or of long waits (STANDARD), by its Resource's substitution. */
  | { kind: 'task'; machine: 'EXPRESS' | 'STANDARD'; substitution: string }
  /** API Gateway invoking the REQUEST authorizer. */
  | { kind: 'authorizer' }
  /** API Gateway invoking a route's function, for a request of that method and path. */
  | { kind: 'route'; functionName: string; method: string; path: string }
  /** EventBridge sending status events to the queue the function reads (its event source). */
  | { kind: 'bus-to-queue'; functionName: string }
  /** A schedule (EventBridge Scheduler, or a scheduled rule) invoking the function. */
  | { kind: 'scheduled'; functionName: string };

type Check = (call: ServiceCall) => Promise<void>;
let registered: Check | undefined;

/** The local IAM check, before any service call is played. */
export const useServiceCallChecks = (check: Check | undefined): void => {
  registered = check;
};

/** Throws the AccessDeniedException AWS would give the service, when IAM denies the call. */
export const checkServiceCall = async (call: ServiceCall): Promise<void> => {
  await registered?.(call);
};
