import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { creditTransferKey } from '#adapters/table/keys';
import { RECOVERY_INDEX } from '#adapters/table/table-definition';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually } from './support/webhook-receiver.ts';

// The reconciler looks often, so an expired approval is rejected within the test.
const service = useLocalService({ env: { RECONCILE_INTERVAL_SECONDS: '2' } });

const TRANSFERS = '/v1/payments/credit-transfers';
const EUR_RULE = { name: 'EUR payments', currency: 'EUR', approvalsRequired: 2 };

interface Client {
  clientId: string;
  token: string;
}

const clientOf = async (tenant: string, scope: string): Promise<Client> => {
  const clientId = `approvals-${randomUUID()}`;
  const clientSecret = `${clientId}-secret`;
  await createClient(service, { clientId, clientSecret, scope, tenant });
  return { clientId, token: await requestToken(service.baseUrl, undefined, { clientId, clientSecret }) };
};

/** A tenant of its own: an initiator (who may approve too), two approvers and its controls. */
const tenantWith = async (controls: Record<string, unknown>) => {
  const tenant = `approvals-${randomUUID().slice(0, 8)}`;
  const [initiator, first, second, admin] = await Promise.all([
    clientOf(tenant, 'transactions:read transactions:write transactions:approve'),
    clientOf(tenant, 'transactions:read transactions:approve'),
    clientOf(tenant, 'transactions:read transactions:approve'),
    clientOf(tenant, 'payment-controls:manage'),
  ]);
  const stored = await callApi(service.baseUrl, '/v1/payment-controls', {
    method: 'PUT',
    token: admin.token,
    body: controls,
  });
  expect(stored.status, JSON.stringify(stored.body)).toBe(200);
  return { tenant, initiator, first, second, admin };
};

const initiate = async (as: Client, overrides: Record<string, unknown> = { currency: 'EUR' }) => {
  const reply = await callApi(service.baseUrl, TRANSFERS, {
    token: as.token,
    body: minimalCreditTransfer(overrides),
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(202);
  return reply.body;
};

const decide = (as: Client, paymentId: string, decision: 'approve' | 'reject', reason?: string) =>
  callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/approvals`, {
    token: as.token,
    body: { decision, ...(reason !== undefined && { reason }) },
  });

const statusOf = async (as: Client, paymentId: string) =>
  (await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: as.token })).body;

const finalStatusOf = (as: Client, paymentId: string, status: string) =>
  eventually(
    async () => {
      const report = await statusOf(as, paymentId);
      return report.status === status ? report : undefined;
    },
    `${paymentId} ${status}`,
    60_000,
  );

describe('approvals (four eyes)', () => {
  it('holds a transfer that meets a rule in Pending until two other clients approve it, then settles it', async () => {
    const { initiator, first, second } = await tenantWith({ approvalRules: [EUR_RULE] });
    const pending = await initiate(initiator);
    expect(pending.status).toBe('Pending');
    expect(pending.approval).toMatchObject({ rule: 'EUR payments', approvalsRequired: 2, approvals: [] });
    expect(Date.parse(pending.approval.expiresAt)).toBeGreaterThan(Date.now());
    // No rule for other currencies: that transfer goes its way at once.
    expect((await initiate(initiator, { currency: 'USD' })).status).toBe('Received');

    const listed = await callApi(service.baseUrl, `${TRANSFERS}?status.eq=Pending`, {
      token: initiator.token,
    });
    expect(listed.body.map((transfer: { paymentId: string }) => transfer.paymentId)).toEqual([
      pending.paymentId,
    ]);

    // The initiator holds transactions:approve too, and is still refused.
    const own = await decide(initiator, pending.paymentId, 'approve');
    expect(own.status).toBe(403);
    expect(own.body.error_description).toContain('initiated');

    const once = await decide(first, pending.paymentId, 'approve', 'matches the invoice');
    expect(once.status, JSON.stringify(once.body)).toBe(200);
    expect(once.body.status).toBe('Pending');
    expect(once.body.approval.approvals).toEqual([
      expect.objectContaining({
        clientId: first.clientId,
        decision: 'approve',
        reason: 'matches the invoice',
      }),
    ]);
    expect((await decide(first, pending.paymentId, 'approve')).status).toBe(409);
    // Still pending after one approval of two: nothing ran.
    expect((await statusOf(initiator, pending.paymentId)).status).toBe('Pending');

    const twice = await decide(second, pending.paymentId, 'approve');
    expect(twice.status).toBe(200);
    expect(twice.body.status).not.toBe('Pending');
    const settled = await finalStatusOf(initiator, pending.paymentId, 'AcceptedSettlementCompleted');
    expect(settled.approval.approvals.map((entry: { clientId: string }) => entry.clientId)).toEqual([
      first.clientId,
      second.clientId,
    ]);

    const decisions = await callApi(service.baseUrl, `${TRANSFERS}/${pending.paymentId}/approvals`, {
      token: first.token,
    });
    expect(decisions.status).toBe(200);
    expect(decisions.body).toHaveLength(2);
    expect(decisions.body[0]).toMatchObject({ clientId: first.clientId, decision: 'approve' });
    expect(typeof decisions.body[0].tokenId).toBe('string');
    // Decided: a late decision is refused.
    expect((await decide(initiator, pending.paymentId, 'approve')).status).toBe(403);
  }, 120_000);

  it('ends a pending transfer Rejected (DS02) at the first rejection', async () => {
    const { initiator, first, second } = await tenantWith({ approvalRules: [EUR_RULE] });
    const { paymentId } = await initiate(initiator);
    const rejected = await decide(first, paymentId, 'reject', 'unknown supplier');
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({
      status: 'Rejected',
      statusReason: 'OrderCancelled',
      statusReasonCode: 'DS02',
    });
    const late = await decide(second, paymentId, 'approve');
    expect(late.status).toBe(409);
    expect(late.body.error).toBe('payment_not_pending');
  }, 60_000);

  it('cancels a pending transfer at once', async () => {
    const { initiator, first } = await tenantWith({ approvalRules: [EUR_RULE] });
    const { paymentId } = await initiate(initiator);
    const cancelled = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/cancellation`, {
      token: initiator.token,
      body: { cancellationReason: 'sent twice' },
    });
    expect(cancelled.status).toBe(202);
    expect(cancelled.body).toMatchObject({ status: 'Cancelled', statusReason: 'RequestedByCustomer' });
    expect((await statusOf(initiator, paymentId)).status).toBe('Cancelled');
    expect((await decide(first, paymentId, 'approve')).status).toBe(409);
  }, 60_000);

  it('rejects a transfer whose approval expired (DS24), with no decision needed', async () => {
    const { initiator, first } = await tenantWith({ approvalRules: [EUR_RULE], approvalExpiry: 'PT1M' });
    const { paymentId, approval } = await initiate(initiator);
    expect(Date.parse(approval.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    const expired = await eventually(
      async () => {
        const report = await statusOf(initiator, paymentId);
        return report.status === 'Rejected' ? report : undefined;
      },
      'the expiry',
      120_000,
    );
    expect(expired).toMatchObject({ statusReason: 'WaitingTimeExpired', statusReasonCode: 'DS24' });
    expect(Date.parse(expired.date)).toBeGreaterThanOrEqual(Date.parse(approval.expiresAt));
    expect((await decide(first, paymentId, 'approve')).status).toBe(409);
  }, 180_000);

  it('leaves a pending transfer as it was when the rules change, and applies the change to later ones', async () => {
    const { initiator, first, second, admin } = await tenantWith({ approvalRules: [EUR_RULE] });
    const { paymentId } = await initiate(initiator);
    const changed = await callApi(service.baseUrl, '/v1/payment-controls', {
      method: 'PUT',
      token: admin.token,
      body: { approvalRules: [] },
      headers: { 'If-Match': '"1"' },
    });
    expect(changed.status).toBe(200);
    expect((await initiate(initiator)).status).toBe('Received');
    expect((await statusOf(initiator, paymentId)).approval.approvalsRequired).toBe(2);
    expect((await decide(first, paymentId, 'approve')).body.status).toBe('Pending');
    expect((await decide(second, paymentId, 'approve')).status).toBe(200);
    await finalStatusOf(initiator, paymentId, 'AcceptedSettlementCompleted');
  }, 120_000);

  it('shows another tenant nothing: its approvers get 404', async () => {
    const { initiator } = await tenantWith({ approvalRules: [EUR_RULE] });
    const { paymentId } = await initiate(initiator);
    const stranger = await clientOf(
      `approvals-${randomUUID().slice(0, 8)}`,
      'transactions:read transactions:approve',
    );
    expect((await decide(stranger, paymentId, 'approve')).status).toBe(404);
    const decisions = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/approvals`, {
      token: stranger.token,
    });
    expect(decisions.status).toBe(404);
    expect((await statusOf(initiator, paymentId)).approval.approvals).toEqual([]);
  }, 60_000);
});

describe('approvals racing and interrupted', () => {
  it('moves a transfer on once when approvals race: the decisions past the last one needed are refused', async () => {
    const { tenant, initiator, first, second } = await tenantWith({ approvalRules: [EUR_RULE] });
    const third = await clientOf(tenant, 'transactions:read transactions:approve');
    const { paymentId } = await initiate(initiator);
    const answers = await Promise.all([first, second, third].map((as) => decide(as, paymentId, 'approve')));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 409]);
    await finalStatusOf(initiator, paymentId, 'AcceptedSettlementCompleted');
    const item = await service.table.get({
      TableName: 'credit-transfers',
      Key: creditTransferKey(tenant, paymentId),
    });
    const statuses = ((item.Item?.history ?? []) as { status: string }[]).map((change) => change.status);
    expect(statuses.filter((status) => status === 'Received')).toHaveLength(1);
    expect(statuses.slice(0, 2)).toEqual(['Pending', 'Received']);
  }, 120_000);

  it('has the reconciler start a transfer whose last approval was recorded by a process that then stopped', async () => {
    const { tenant, initiator, first, second } = await tenantWith({ approvalRules: [EUR_RULE] });
    const { paymentId } = await initiate(initiator);
    expect((await decide(first, paymentId, 'approve')).status).toBe(200);
    // The second approval as its write left it: recorded, due for a check now, the transfer not moved on.
    const now = new Date().toISOString();
    await service.table.update({
      TableName: 'credit-transfers',
      Key: creditTransferKey(tenant, paymentId),
      UpdateExpression: 'SET approval.approvals = list_append(approval.approvals, :decision), #due = :due',
      ExpressionAttributeNames: { '#due': RECOVERY_INDEX.sortKey },
      ExpressionAttributeValues: {
        ':decision': [{ clientId: second.clientId, decision: 'approve', at: now }],
        ':due': now,
      },
    });
    expect((await statusOf(initiator, paymentId)).status).toBe('Pending');
    await finalStatusOf(initiator, paymentId, 'AcceptedSettlementCompleted');
  }, 120_000);
});

describe('approval rules on new creditors', () => {
  it('holds a transfer to a creditor the account has not paid before, and not once it has', async () => {
    const { initiator, first } = await tenantWith({
      approvalRules: [{ name: 'new creditors', newCreditorOnly: true, approvalsRequired: 1 }],
    });
    const toSupplier = { currency: 'EUR', creditorAccountId: `supplier-${randomUUID().slice(0, 8)}` };
    const firstPayment = await initiate(initiator, toSupplier);
    expect(firstPayment.status).toBe('Pending');
    expect((await decide(first, firstPayment.paymentId, 'approve')).status).toBe(200);
    await finalStatusOf(initiator, firstPayment.paymentId, 'AcceptedSettlementCompleted');

    expect((await initiate(initiator, toSupplier)).status).toBe('Received');
    // Another account has never paid that creditor.
    expect((await initiate(initiator, { ...toSupplier, debtorAccountId: '001-DDA-01-999999' })).status).toBe(
      'Pending',
    );
  }, 120_000);
});
