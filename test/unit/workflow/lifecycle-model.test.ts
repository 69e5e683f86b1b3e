import { describe, expect, it } from 'vitest';
import type { DocumentClient } from '#adapters/aws/dynamodb-client';
import { SandboxRail } from '#adapters/credit-transfers/sandbox-rail';
import { systemClock } from '#domain/commons/ports';
import type { CreditTransferStatus } from '#domain/credit-transfers/credit-transfer';
import { canTransition, lifecycleExecutionName, statusEventId } from '#domain/credit-transfers/lifecycle';
import {
  DEFAULT_LIFECYCLE_SETTINGS,
  pollBudgetSeconds,
  pollWaitSeconds,
} from '#domain/credit-transfers/lifecycle-steps';

const EXECUTION_NAME = /^[A-Za-z0-9_-]{1,80}$/;

describe('execution names', () => {
  const start = { tenant: 'tenant-a', paymentId: '7d1f0c1e-5b6a-8c3d-9e4f-0a1b2c3d4e5f' } as const;

  it('fit Step Functions: at most 80 of [A-Za-z0-9-_], also for long or odd ids', () => {
    const odd = { tenant: 't'.repeat(64), paymentId: 'ä/ b#'.repeat(8) };
    for (const candidate of [start, odd]) {
      for (const name of [
        lifecycleExecutionName({ ...candidate, trigger: 'initiation' }),
        lifecycleExecutionName({ ...candidate, trigger: 'cancellation' }),
        lifecycleExecutionName({ ...candidate, trigger: 'recovery', attempt: 99_999 }),
      ]) {
        expect(name).toMatch(EXECUTION_NAME);
      }
    }
  });

  it('are the same for a replayed start and differ per trigger, recovery attempt and tenant', () => {
    const initiation = lifecycleExecutionName({ ...start, trigger: 'initiation' });
    expect(lifecycleExecutionName({ ...start, trigger: 'initiation' })).toBe(initiation);
    const names = new Set([
      initiation,
      lifecycleExecutionName({ ...start, trigger: 'cancellation' }),
      lifecycleExecutionName({ ...start, trigger: 'recovery', attempt: 1 }),
      lifecycleExecutionName({ ...start, trigger: 'recovery', attempt: 2 }),
      lifecycleExecutionName({ ...start, tenant: 'tenant-b', trigger: 'initiation' }),
    ]);
    expect(names.size).toBe(5);
    expect(initiation.startsWith(start.paymentId)).toBe(true);
  });
});

describe('status event ids', () => {
  it('are UUIDs, stable for one history entry and distinct across entries and tenants', () => {
    const id = statusEventId('tenant-a', 'pay-1', 3);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(statusEventId('tenant-a', 'pay-1', 3)).toBe(id);
    expect(statusEventId('tenant-a', 'pay-1', 4)).not.toBe(id);
    expect(statusEventId('tenant-b', 'pay-1', 3)).not.toBe(id);
  });
});

describe('status transitions', () => {
  const cases: [CreditTransferStatus, CreditTransferStatus, boolean][] = [
    ['Received', 'AcceptedTechnicalValidation', true],
    ['Received', 'AcceptedCustomerProfile', false],
    ['AcceptedCustomerProfile', 'AcceptedTechnicalValidation', false],
    ['AcceptedSettlementInProcess', 'AcceptedSettlementCompleted', true],
    ['AcceptedSettlementInProcess', 'Rejected', true],
    ['AcceptedSettlementInProcess', 'Cancelled', true],
    ['AcceptedSettlementCompleted', 'Cancelled', false],
    ['Cancelled', 'Rejected', false],
    ['Rejected', 'AcceptedSettlementCompleted', false],
  ];
  it.each(cases)('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(canTransition(from, to)).toBe(allowed);
  });
});

describe('clearing poll backoff', () => {
  it('doubles each wait up to the bound, so an execution polls a bounded number of times', () => {
    const settings = {
      ...DEFAULT_LIFECYCLE_SETTINGS,
      pollInitialSeconds: 1,
      pollMaxIntervalSeconds: 60,
      pollMaxAttempts: 8,
    };
    expect(Array.from({ length: 8 }, (_, attempt) => pollWaitSeconds(settings, attempt))).toEqual([
      1, 2, 4, 8, 16, 32, 60, 60,
    ]);
    expect(pollBudgetSeconds(settings)).toBe(183);
  });
});

describe('sandbox customer-profile checks', () => {
  const rail = new SandboxRail({} as DocumentClient, 'unused', systemClock, {
    settlementSeconds: 1,
    holdSeconds: 300,
  });
  const check = (debtorAccountId: string) =>
    rail.checkCustomerProfile({
      tenant: 't',
      paymentId: 'p',
      clientId: 'c',
      transfer: { paymentMethod: 'CreditTransfer', amount: '1', debtorAccountId },
    });

  it.each([
    ['001-DDA-01-blocked', 'BlockedAccount'],
    ['001-DDA-01-closed', 'ClosedAccountNumber'],
    ['001-DDA-01-nofunds', 'InsufficientFunds'],
    ['001-DDA-01-forbidden', 'TransactionForbidden'],
    ['001-DDA-01-SANCTIONED', 'RegulatoryReason'],
  ])('refuses %s with %s', async (account, reason) => {
    await expect(check(account)).resolves.toEqual({ accepted: false, reason });
  });

  it('accepts any other account, -hold included', async () => {
    await expect(check('001-DDA-01-123456')).resolves.toEqual({ accepted: true });
    await expect(check('001-DDA-01-hold')).resolves.toEqual({ accepted: true });
    await expect(check('blocked-001')).resolves.toEqual({ accepted: true });
  });
});
