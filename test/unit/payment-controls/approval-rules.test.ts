import { describe, expect, it } from 'vitest';
import { approvalFor } from '#domain/payment-controls/approval-rules';
import {
  durationSeconds,
  EMPTY_PAYMENT_CONTROLS,
  type PaymentControls,
} from '#domain/payment-controls/payment-controls';

const NOW = new Date('2026-12-07T10:00:00.000Z');
const transfer = (fields: Record<string, unknown> = {}) => ({
  paymentMethod: 'CreditTransfer',
  amount: '10000.00',
  currency: 'EUR',
  debtorAccountId: 'DE89370400440532013000',
  ...fields,
});
const controls = (
  approvalRules: PaymentControls['approvalRules'],
  approvalExpiry = 'P7D',
): PaymentControls => ({
  ...EMPTY_PAYMENT_CONTROLS,
  approvalRules,
  approvalExpiry,
});

describe('approval rules', () => {
  it('match when every condition they name holds, the amount compared exactly in the rule’s currency', () => {
    const rules = controls([
      { name: 'large', currency: 'EUR', minimumAmount: '10000.00', approvalsRequired: 2 },
    ]);
    expect(approvalFor(rules, { transfer: transfer(), clientId: 'a' }, NOW)?.rule).toBe('large');
    expect(
      approvalFor(rules, { transfer: transfer({ amount: '9999.99' }), clientId: 'a' }, NOW),
    ).toBeUndefined();
    expect(approvalFor(rules, { transfer: transfer({ amount: '10000' }), clientId: 'a' }, NOW)?.rule).toBe(
      'large',
    );
    expect(
      approvalFor(rules, { transfer: transfer({ currency: 'USD' }), clientId: 'a' }, NOW),
    ).toBeUndefined();
    // A transfer without a currency may be in the rule's: held at or above the minimum, not below.
    expect(
      approvalFor(rules, { transfer: transfer({ currency: undefined }), clientId: 'a' }, NOW)?.rule,
    ).toBe('large');
    expect(
      approvalFor(
        rules,
        { transfer: transfer({ currency: undefined, amount: '9999.99' }), clientId: 'a' },
        NOW,
      ),
    ).toBeUndefined();
  });

  it('pick the matching rule that needs the most approvals, and set the expiry from the document', () => {
    const rules = controls(
      [
        { name: 'any', approvalsRequired: 1 },
        { name: 'from this client', initiatingClientId: 'robot', approvalsRequired: 3 },
        { name: 'by method', paymentMethod: 'Wire', approvalsRequired: 2 },
      ],
      'PT30M',
    );
    expect(approvalFor(rules, { transfer: transfer(), clientId: 'robot' }, NOW)).toEqual({
      rule: 'from this client',
      initiatingClientId: 'robot',
      approvalsRequired: 3,
      approvals: [],
      expiresAt: '2026-12-07T10:30:00.000Z',
    });
    expect(
      approvalFor(rules, { transfer: transfer({ paymentMethod: 'Wire' }), clientId: 'x' }, NOW)?.rule,
    ).toBe('by method');
    expect(approvalFor(rules, { transfer: transfer(), clientId: 'x' }, NOW)?.rule).toBe('any');
  });

  it('hold a transfer to a new creditor only when the creditor is known to be new', () => {
    const rules = controls([{ name: 'new creditors', newCreditorOnly: true, approvalsRequired: 1 }]);
    const toCreditor = transfer({ creditorAccountId: 'FR7630006000011234567890189' });
    expect(approvalFor(rules, { transfer: toCreditor, clientId: 'a', newCreditor: true }, NOW)?.rule).toBe(
      'new creditors',
    );
    expect(
      approvalFor(rules, { transfer: toCreditor, clientId: 'a', newCreditor: false }, NOW),
    ).toBeUndefined();
    expect(
      approvalFor(rules, { transfer: transfer(), clientId: 'a', newCreditor: true }, NOW),
    ).toBeUndefined();
  });

  it('read durations in weeks, days, hours, minutes and seconds only', () => {
    expect(durationSeconds('P7D')).toBe(7 * 86_400);
    expect(durationSeconds('PT1M')).toBe(60);
    expect(durationSeconds('P1W')).toBe(7 * 86_400);
    expect(durationSeconds('P1DT12H')).toBe(36 * 3600);
    for (const refused of ['P', 'PT', 'P1M', 'P1Y', '7D', 'P1.5D', 'p7d'])
      expect(durationSeconds(refused)).toBeUndefined();
  });
});
