import { describe, expect, it } from 'vitest';
import { ATTEMPT_TIMEOUT_MS } from '#domain/webhook-schedule';
import { lookingEndsAt } from '../../../lambdas/webhooks/deliver-due-webhooks.ts';

/** The minute poller stops looking at the queue in time to let its last attempts end inside the invocation. */
describe('deliverDueWebhooks run length', () => {
  const now = 1_000_000;

  it('looks for 50 s when its invocation has the time', () => {
    expect(lookingEndsAt(now, now + 75_000)).toBe(now + 50_000);
    expect(lookingEndsAt(now, undefined)).toBe(now + 50_000);
  });

  it('stops sooner under a shorter timeout, leaving an attempt its whole time limit', () => {
    const ends = lookingEndsAt(now, now + 30_000);
    expect(ends).toBeLessThan(now + 30_000 - ATTEMPT_TIMEOUT_MS);
    expect(ends).toBeGreaterThan(now);
  });

  it('does not look at all when the invocation has less left than an attempt needs', () => {
    expect(lookingEndsAt(now, now + ATTEMPT_TIMEOUT_MS)).toBeLessThanOrEqual(now);
  });
});
