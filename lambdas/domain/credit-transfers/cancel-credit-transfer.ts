import * as z from 'zod/mini';
import { canonicalJson } from '../commons/canonical-json.ts';
import {
  IdempotencyKeyReusedError,
  PaymentNotCancellableError,
  PaymentNotFoundError,
} from '../commons/errors.ts';
import type { Clock } from '../commons/ports.ts';
import { described } from '../commons/text.ts';
import { parseOrThrow } from '../commons/validation.ts';
import { settlePending } from '../payment-controls/decide-approval.ts';
import {
  type CreditTransfer,
  descriptionSchema,
  paymentIdSchema,
  type ServicerHeaders,
} from './credit-transfer.ts';
import { toCreditTransfer } from './credit-transfer-view.ts';
import { isFinal, STALL_SECONDS, secondsAfter } from './lifecycle.ts';
import type { CancellationRequest, CreditTransferRecord, LifecycleStore, WorkflowStarter } from './ports.ts';
import { startLifecycle } from './start-lifecycle.ts';

/** Spec 2.1: the cancellation request body, every field optional. */
export const cancellationRequestSchema = z.strictObject({
  cancellationReason: described(
    z.optional(descriptionSchema),
    'Why the cancellation is requested; line feed and tab are allowed.',
  ),
});

export interface CancellationDependencies {
  store: LifecycleStore;
  clock: Clock;
  workflow?: WorkflowStarter;
}

export interface CancellationCommand {
  tenant: string;
  clientId: string;
  paymentId: string | undefined;
  /** The JSON body, or undefined when the request has none. */
  body: unknown;
  idempotencyKey?: string;
  servicer: ServicerHeaders;
}

export interface CancellationResult {
  creditTransfer: CreditTransfer;
  /** True when an earlier request with the same idempotency key recorded this cancellation. */
  replayed: boolean;
}

const isReplay = (record: CreditTransferRecord, key: string | undefined): boolean =>
  key !== undefined && record.cancellation?.idempotencyKey === key;

/**
 * Records a cancellation request and leaves the outcome to the workflow: Cancelled if it wins
 * before settlement, otherwise settlement stands. The first request recorded is the one kept.
 */
export const cancelCreditTransfer = async (
  { store, clock, workflow }: CancellationDependencies,
  command: CancellationCommand,
): Promise<CancellationResult> => {
  const { tenant, clientId, idempotencyKey } = command;
  const paymentId = parseOrThrow(paymentIdSchema, command.paymentId, 'The paymentId is not valid', [
    'paymentId',
  ]);
  const { cancellationReason } = parseOrThrow(
    cancellationRequestSchema,
    command.body ?? {},
    'The cancellation request is not valid',
  );
  const now = clock.now();
  const request: CancellationRequest = {
    ...(cancellationReason !== undefined && { reason: cancellationReason }),
    date: now.toISOString(),
    clientId,
    ...(idempotencyKey !== undefined && { idempotencyKey }),
    ...(Object.values(command.servicer).some((value) => value !== undefined) && {
      servicer: command.servicer,
    }),
  };
  const lifecycle = { tenant, paymentId, trigger: 'cancellation' } as const;

  // One conditional write in the usual case; a read only to explain a refusal.
  for (let race = 0; race < 3; race++) {
    const recorded = await store.requestCancellation(
      tenant,
      paymentId,
      request,
      secondsAfter(now, STALL_SECONDS),
    );
    if (recorded?.status === 'Pending') {
      // No workflow runs while it waits for approval: cancelled at once.
      const cancelled = await settlePending({ store, clock, workflow }, recorded);
      return { creditTransfer: toCreditTransfer(cancelled), replayed: false };
    }
    if (recorded) {
      await startLifecycle(workflow, lifecycle);
      return { creditTransfer: toCreditTransfer(recorded), replayed: false };
    }
    const record = await store.get(tenant, paymentId);
    // Another tenant's payment is answered exactly like an unknown one.
    if (record === undefined) throw new PaymentNotFoundError(paymentId);
    if (isReplay(record, idempotencyKey)) {
      // A repeat is the same reason and the same servicer headers; anything else reuses the key.
      const recorded = record.cancellation;
      if (
        recorded?.reason !== request.reason ||
        canonicalJson(recorded?.servicer ?? {}) !== canonicalJson(request.servicer ?? {})
      ) {
        throw new IdempotencyKeyReusedError();
      }
      return { creditTransfer: toCreditTransfer(record), replayed: true };
    }
    if (record.status === 'Cancelled') return { creditTransfer: toCreditTransfer(record), replayed: false };
    if (isFinal(record.status)) throw new PaymentNotCancellableError(paymentId, record.status);
    if (record.status === 'Pending' && record.cancellation !== undefined) {
      return {
        creditTransfer: toCreditTransfer(await settlePending({ store, clock, workflow }, record)),
        replayed: false,
      };
    }
    if (record.cancellation !== undefined) {
      // Requested before: make sure a workflow acts on it (a no-op when one already did).
      await startLifecycle(workflow, lifecycle);
      return { creditTransfer: toCreditTransfer(record), replayed: false };
    }
    // The write was refused, yet nothing explains it: the status moved meanwhile; look again.
  }
  throw new Error(`Cancellation of ${paymentId} kept racing with status changes`);
};
