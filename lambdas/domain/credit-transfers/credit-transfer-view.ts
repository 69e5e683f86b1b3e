import { statusReasonCodeOf } from '../iso20022/status-codes.ts';
import { approvalView } from '../payment-controls/approval.ts';
import type { CreditTransfer } from './credit-transfer.ts';
import type { CreditTransferRecord } from './ports.ts';

/** The credit transfer as a client sees it: its fields as sent, then those the service sets. */
export const toCreditTransfer = (record: CreditTransferRecord): CreditTransfer => ({
  ...record.transfer,
  paymentId: record.paymentId,
  status: record.status,
  ...(record.statusReason !== undefined && {
    statusReason: record.statusReason,
    statusReasonCode: statusReasonCodeOf(record.statusReason, record.statusReasonCode),
  }),
  date: record.statusDate,
  ...(record.approval !== undefined && { approval: approvalView(record.approval) }),
});
