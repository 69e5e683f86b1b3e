import type { CreditTransfer } from './credit-transfer.ts';
import type { CreditTransferRecord } from './ports.ts';

/** The credit transfer as a client sees it: its fields as sent, then the four the service sets. */
export const toCreditTransfer = (record: CreditTransferRecord): CreditTransfer => ({
  ...record.transfer,
  paymentId: record.paymentId,
  status: record.status,
  ...(record.statusReason !== undefined && { statusReason: record.statusReason }),
  date: record.statusDate,
});
