import { type LifecycleState, lifecycleStateSchema } from '#domain/credit-transfers/lifecycle-steps';
import { logger } from '#shared/logger';
import { observed } from '#shared/observability';

/** The execution input or a state's output is not what the steps pass on: retrying cannot help. */
export class InvalidLifecycleInputError extends Error {
  constructor(detail: string) {
    super(`Lifecycle task input is not valid: ${detail}`);
    this.name = 'InvalidLifecycleInputError';
  }
}

/**
 * A Task state's handler: the state input in, the state output out (the Task's Resource is the
 * function itself, so its return value is the state output). Errors keep their name: the ASL's
 * Retry matches on it. Locally the same function is called in-process with the same input.
 */
export const lifecycleTask = <R>(name: string, step: (state: LifecycleState) => Promise<R>) =>
  observed(
    async (input: unknown): Promise<R> => {
      const parsed = lifecycleStateSchema.safeParse(input);
      if (!parsed.success) throw new InvalidLifecycleInputError(parsed.error.message);
      const state = parsed.data;
      try {
        return await step(state);
      } catch (error) {
        logger.error('Lifecycle step failed', {
          step: name,
          paymentId: state.paymentId,
          error: error as Error,
        });
        throw error;
      }
    },
    // Identifiers only, as the state carries them: never payment data.
    (input) => {
      const { tenant, paymentId } = (input ?? {}) as { tenant?: unknown; paymentId?: unknown };
      return {
        step: name,
        ...(typeof tenant === 'string' && { tenant }),
        ...(typeof paymentId === 'string' && { paymentId }),
      };
    },
  );
