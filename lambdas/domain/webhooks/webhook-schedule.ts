/**
 * When a webhook delivery is tried again. Each event has its own schedule per endpoint: a failed
 * attempt moves only that event's next attempt, so one event's backoff never holds another back.
 */

/** The Standard Webhooks schedule: the waits after the first, second, ... failed attempt. */
export const STANDARD_RETRY_SCHEDULE_SECONDS: readonly number[] = [
  5, 300, 1800, 7200, 18_000, 36_000, 36_000,
];

/** An endpoint that has failed without a success for this long is disabled. */
export const DISABLE_AFTER_SECONDS = 3 * 86_400;

/** How long one attempt may take, connection and answer together. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * How long a claimed delivery is held by the worker trying it. Past it, the delivery is due again:
 * a worker that died mid-attempt loses nothing. Well above ATTEMPT_TIMEOUT_MS.
 */
export const CLAIM_SECONDS = 60;

export interface RetryPolicy {
  /** The waits after each failed attempt; its length is the number of retries. */
  scheduleSeconds: readonly number[];
  disableAfterSeconds: number;
}

export const STANDARD_RETRY_POLICY: RetryPolicy = {
  scheduleSeconds: STANDARD_RETRY_SCHEDULE_SECONDS,
  disableAfterSeconds: DISABLE_AFTER_SECONDS,
};

const positiveSeconds = (text: string, name: string): number => {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must hold positive numbers of seconds, comma-separated: '${text}'`);
  }
  return value;
};

/**
 * The retry policy from settings (WEBHOOK_RETRY_SCHEDULE_SECONDS, e.g. `1,2,4`, and
 * WEBHOOK_DISABLE_AFTER_SECONDS), the standard one where a setting is absent. A malformed
 * setting throws: a service retrying on a schedule nobody meant is worse than one that stops.
 */
export const retryPolicyFrom = (settings: { schedule?: string; disableAfter?: string }): RetryPolicy => ({
  scheduleSeconds:
    settings.schedule === undefined
      ? STANDARD_RETRY_SCHEDULE_SECONDS
      : settings.schedule.split(',').map((part) => positiveSeconds(part, 'WEBHOOK_RETRY_SCHEDULE_SECONDS')),
  disableAfterSeconds:
    settings.disableAfter === undefined
      ? DISABLE_AFTER_SECONDS
      : positiveSeconds(settings.disableAfter, 'WEBHOOK_DISABLE_AFTER_SECONDS'),
});

/**
 * The time of the next attempt after `attemptsMade` failed attempts (1 after the first), or
 * undefined once the schedule is spent and the delivery is given up.
 */
export const nextAttemptAt = (policy: RetryPolicy, attemptsMade: number, now: Date): Date | undefined => {
  const wait = policy.scheduleSeconds[attemptsMade - 1];
  return wait === undefined ? undefined : new Date(now.getTime() + wait * 1000);
};

/** True once an endpoint failing since `failingSince` has failed for the whole disable period. */
export const failedTooLong = (policy: RetryPolicy, failingSince: string, now: Date): boolean =>
  now.getTime() - Date.parse(failingSince) >= policy.disableAfterSeconds * 1000;

/** What an attempt's answer means for the delivery. */
export type AttemptVerdict = 'delivered' | 'gone' | 'failed';

/** 2xx delivers; 410 Gone asks never to be called again; anything else (3xx included: never followed) fails. */
export const verdictOf = (httpStatus: number | undefined): AttemptVerdict => {
  if (httpStatus === undefined) return 'failed';
  if (httpStatus >= 200 && httpStatus < 300) return 'delivered';
  if (httpStatus === 410) return 'gone';
  return 'failed';
};
