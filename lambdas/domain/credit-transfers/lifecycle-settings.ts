/** How the workflow polls clearing and holds for a value date: plain numbers, no schema to build. */
export interface LifecycleSettings {
  /** First wait before asking clearing for the outcome; each further wait doubles. */
  pollInitialSeconds: number;
  /** Longest wait between two polls. */
  pollMaxIntervalSeconds: number;
  /** Polls per execution; then the execution ends and the reconciler takes over. */
  pollMaxAttempts: number;
  /**
   * How long the fast path (the Express state machine, billed by duration) waits for clearing in
   * all: a poll whose wait would take the waits past it is the Standard state machine's.
   */
  fastPollSeconds: number;
  /**
   * Longest hold one execution waits for a value date (Standard executions last at most a year);
   * a later value date is handed to the reconciler, which starts an execution that holds the rest.
   */
  maxHoldSeconds: number;
  /**
   * Executions a transfer gets without moving on (a status change, or a wait for something known)
   * before it is parked for an operator instead of being started again.
   */
  maxAttempts: number;
  /**
   * How long a submission claim protects its holder: longer than any step invocation that submits
   * can run (its function's timeout), so a claim older than this has no live holder. Until then no
   * one else submits; afterwards clearing is asked, and only a payment it lacks is submitted again.
   */
  submissionLeaseSeconds: number;
}

export const DEFAULT_LIFECYCLE_SETTINGS: LifecycleSettings = {
  pollInitialSeconds: 1,
  pollMaxIntervalSeconds: 60,
  pollMaxAttempts: 8,
  fastPollSeconds: 60,
  maxHoldSeconds: 300 * 86_400,
  maxAttempts: 5,
  submissionLeaseSeconds: 120,
};

/** Seconds to wait before poll number `attempt` (from 0). */
export const pollWaitSeconds = (settings: LifecycleSettings, attempt: number): number =>
  Math.ceil(Math.min(settings.pollMaxIntervalSeconds, settings.pollInitialSeconds * 2 ** attempt));

/** Waits before polls 0 to `attempt` in all. */
const waitedBy = (settings: LifecycleSettings, attempt: number): number => {
  let total = 0;
  for (let at = 0; at <= attempt; at++) total += pollWaitSeconds(settings, at);
  return total;
};

/** How long one execution may poll before it hands over: the sum of its waits. */
export const pollBudgetSeconds = (settings: LifecycleSettings): number =>
  waitedBy(settings, settings.pollMaxAttempts - 1);

/**
 * Whether poll number `attempt` (from 0) is the fast path's: `poll` while its wait keeps the
 * execution's waits within the fast poll budget, else `wait` (the Standard state machine's).
 */
export const pollRouteOf = (settings: LifecycleSettings, attempt: number): 'poll' | 'wait' =>
  waitedBy(settings, attempt) <= settings.fastPollSeconds ? 'poll' : 'wait';
