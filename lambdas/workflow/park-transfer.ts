import * as z from 'zod/mini';
import { type ParkOutcome, parkIfExhausted } from '#domain/credit-transfers/parked-transfers';
import { logger } from '#shared/logger';
import { countTransfersParked } from '#shared/metrics';
import { observed } from '#shared/observability';
import { workflowDependencies } from './dependencies.ts';
import { operationsEventPublisher } from './status-events.ts';
import { InvalidLifecycleInputError } from './task.ts';

/** The catch-all's input: the state as the failed step got it, with the caught error under `failure`. */
const caughtSchema = z.object({
  tenant: z.string().check(z.minLength(1)),
  paymentId: z.string().check(z.minLength(1)),
  failure: z.optional(z.object({ Error: z.optional(z.string()) })),
});

/**
 * Task state ParkIfExhausted, the workflow's catch-all: a step failed after its retries. The
 * transfer is parked for an operator once it has had its last attempt; before that the execution
 * fails (loudly: logged here, and in the execution's history) and the reconciler starts another.
 */
export const handler = observed(
  async (input: unknown): Promise<ParkOutcome> => {
    const parsed = caughtSchema.safeParse(input);
    if (!parsed.success) throw new InvalidLifecycleInputError(parsed.error.message);
    const { tenant, paymentId, failure } = parsed.data;
    const { store, clock, settings } = workflowDependencies();
    const outcome = await parkIfExhausted(
      { store, clock, settings, events: operationsEventPublisher() },
      { tenant, paymentId, error: failure?.Error },
    );
    if (outcome.parked) {
      countTransfersParked(1);
      logger.error('Credit transfer parked for an operator', { paymentId, error: failure?.Error });
    } else {
      logger.error('Lifecycle execution failed; the reconciler starts it again', {
        paymentId,
        error: failure?.Error,
        attempts: outcome.attempts,
      });
    }
    return outcome;
  },
  (input) => {
    const { tenant, paymentId } = (input ?? {}) as { tenant?: unknown; paymentId?: unknown };
    return {
      step: 'parkIfExhausted',
      ...(typeof tenant === 'string' && { tenant }),
      ...(typeof paymentId === 'string' && { paymentId }),
    };
  },
);
