import { type CreditTransfer, paymentIdSchema } from './credit-transfer.ts';
import { toCreditTransfer } from './credit-transfer-view.ts';
import { PaymentNotFoundError } from './errors.ts';
import type { CreditTransferStore } from './ports.ts';
import { parseOrThrow } from './validation.ts';

export interface StatusQuery {
  tenant: string;
  paymentId: string | undefined;
}

export const getCreditTransferStatus = async (
  { store }: { store: CreditTransferStore },
  query: StatusQuery,
): Promise<CreditTransfer> => {
  const paymentId = parseOrThrow(paymentIdSchema, query.paymentId, 'The paymentId is not valid', [
    'paymentId',
  ]);
  const record = await store.get(query.tenant, paymentId);
  // Another tenant's payment is answered exactly like an unknown one.
  if (record === undefined) throw new PaymentNotFoundError(paymentId);
  return toCreditTransfer(record);
};
