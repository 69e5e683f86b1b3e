import { describe, expect, it } from 'vitest';
import { CREDIT_TRANSFER_STATUSES } from '#domain/credit-transfers/credit-transfer-status';
import { STATUS_REASONS } from '#domain/credit-transfers/lifecycle';
import {
  STATUS_REASON_CODE_PATTERN,
  STATUS_REASON_CODES,
  statusReasonCodeOf,
  statusReasonNameOf,
  transactionStatusCodeOf,
} from '#domain/iso20022/status-codes';

describe('ISO 20022 status codes', () => {
  it('maps each status to its transaction status code', () => {
    expect(CREDIT_TRANSFER_STATUSES.map(transactionStatusCodeOf)).toEqual([
      'PDNG',
      'RCVD',
      'ACTC',
      'ACCP',
      'ACSP',
      'ACSC',
      'RJCT',
      'CANC',
    ]);
  });

  it.each([
    ['ClosedAccountNumber', 'AC04'],
    ['BlockedAccount', 'AC06'],
    ['InsufficientFunds', 'AM04'],
    ['TransactionForbidden', 'AG01'],
    ['RegulatoryReason', 'RR04'],
    ['DuplicatePayment', 'DUPL'],
    ['RequestedByCustomer', 'CUST'],
    ['InvalidFileFormat', 'FF01'],
    ['ZeroAmount', 'AM01'],
  ])('gives %s the code %s', (reason, code) => {
    expect(statusReasonCodeOf(reason)).toBe(code);
    expect(statusReasonNameOf(code)).toBe(reason);
  });

  it('gives every reason the service sets a code of its own, none NARR', () => {
    for (const reason of Object.values(STATUS_REASONS)) expect(statusReasonCodeOf(reason)).not.toBe('NARR');
  });

  it('keeps a code the rail gave, and reports an unknown reason as a narrative', () => {
    expect(statusReasonCodeOf('CreditorBankNotRegistered', 'DNOR')).toBe('DNOR');
    expect(statusReasonCodeOf('SomethingElse')).toBe('NARR');
  });

  it('writes every code of the table as ISO does: four capitals or digits, each once', () => {
    const codes = Object.values(STATUS_REASON_CODES);
    for (const code of codes) expect(code).toMatch(STATUS_REASON_CODE_PATTERN);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
