import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually } from './support/webhook-receiver.ts';

/**
 * Limits of the payment controls against the running service: reserved by a conditional write
 * when a transfer arrives, given back when it ends Rejected or Cancelled, kept when it settles,
 * exact under racing initiations and across a SIGKILL.
 */
const service = useLocalService({ env: { RECONCILE_INTERVAL_SECONDS: '2' } });

const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

interface Client {
  clientId: string;
  clientSecret: string;
  token: string;
}

const clientOf = async (tenant: string, scope: string): Promise<Client> => {
  const clientId = `limits-${randomUUID()}`;
  const clientSecret = `${clientId}-secret`;
  await createClient(service, { clientId, clientSecret, scope, tenant });
  return {
    clientId,
    clientSecret,
    token: await requestToken(service.baseUrl, undefined, { clientId, clientSecret }),
  };
};

const tenantWith = async (controls: Record<string, unknown>) => {
  const tenant = `limits-${randomUUID().slice(0, 8)}`;
  const [initiator, approver, admin] = await Promise.all([
    clientOf(tenant, 'transactions:read transactions:write'),
    clientOf(tenant, 'transactions:read transactions:approve'),
    clientOf(tenant, 'payment-controls:manage'),
  ]);
  const stored = await callApi(service.baseUrl, '/v1/payment-controls', {
    method: 'PUT',
    token: admin.token,
    body: controls,
  });
  expect(stored.status, JSON.stringify(stored.body)).toBe(200);
  return { tenant, initiator, approver, admin };
};

const initiate = async (as: Client, overrides: Record<string, unknown>, key?: string) => {
  const reply = await callApi(service.baseUrl, TRANSFERS, {
    token: as.token,
    body: minimalCreditTransfer({ currency: 'EUR', ...overrides }),
    ...(key !== undefined && { headers: { 'Idempotency-Key': key } }),
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(202);
  return reply.body;
};

const usageOf = async (admin: Client, account: string, currency = 'EUR') => {
  const reply = await callApi(
    service.baseUrl,
    `/v1/payment-controls/usage?debtorAccountId=${encodeURIComponent(account)}&currency=${currency}`,
    { token: admin.token },
  );
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.limits as Record<string, unknown>[];
};

/** The workflow executions of a transfer the local runtime ran so far (its execution history). */
const executionsOf = async (paymentId: string) =>
  (await readFile(join(service.dataDir, 'executions.jsonl'), 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { paymentId: string })
    .filter((execution) => execution.paymentId === paymentId);

const statusOf = async (as: Client, paymentId: string) =>
  (await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: as.token })).body;

const finalStatusOf = (as: Client, paymentId: string) =>
  eventually(
    async () => {
      const report = await statusOf(as, paymentId);
      return FINAL.has(report.status) ? report : undefined;
    },
    `${paymentId} final`,
    90_000,
  );

const dayLimit = (account: string, bounds: Record<string, unknown>) => ({
  debtorAccountId: account,
  currency: 'EUR',
  period: 'day',
  onBreach: 'reject',
  ...bounds,
});

describe('limits', () => {
  it('100 initiations racing against a day limit that admits 40 admit exactly 40, by amount', async () => {
    const account = 'DE-LIMITS-AMOUNT-1';
    const { initiator, admin } = await tenantWith({ limits: [dayLimit(account, { maxAmount: '4000.00' })] });
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => initiate(initiator, { debtorAccountId: account, amount: '100.00' })),
    );
    const rejected = answers.filter((transfer) => transfer.status === 'Rejected');
    expect(rejected).toHaveLength(60);
    expect(rejected[0]).toMatchObject({ statusReason: 'AmountExceedsAgreedLimit', statusReasonCode: 'AM14' });
    const [usage] = await usageOf(admin, account);
    expect(usage).toMatchObject({
      period: 'day',
      maxAmount: '4000.00',
      usedAmount: '4000.00',
      usedCount: 40,
      remainingAmount: '0.00',
    });
    // The admitted ones settle and stay counted.
    const admitted = answers.filter((transfer) => transfer.status !== 'Rejected');
    for (const { paymentId } of admitted)
      expect((await finalStatusOf(initiator, paymentId)).status).toBe('AcceptedSettlementCompleted');
    expect((await usageOf(admin, account))[0]).toMatchObject({ usedAmount: '4000.00', usedCount: 40 });
  }, 180_000);

  it('100 initiations racing against a count limit of 40 admit exactly 40', async () => {
    const account = 'DE-LIMITS-COUNT-1';
    const { initiator, admin } = await tenantWith({ limits: [dayLimit(account, { maxCount: 40 })] });
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        initiate(initiator, { debtorAccountId: account, amount: `${index + 1}.00` }),
      ),
    );
    const admitted = answers.filter((transfer) => transfer.status !== 'Rejected');
    expect(admitted).toHaveLength(40);
    const sum = admitted.reduce((total, transfer) => total + Number(transfer.amount), 0);
    expect((await usageOf(admin, account))[0]).toMatchObject({
      usedCount: 40,
      remainingCount: 0,
      usedAmount: `${sum}.00`,
    });
  }, 180_000);

  it('gives back what a transfer counted when the rail rejects it, and when it is cancelled', async () => {
    const refused = 'DE-LIMITS-REL-nofunds';
    const account = 'DE-LIMITS-REL-1';
    const { initiator, approver, admin } = await tenantWith({
      approvalRules: [{ name: 'large', currency: 'EUR', minimumAmount: '500.00', approvalsRequired: 1 }],
      limits: [{ currency: 'EUR', period: 'day', maxAmount: '1000.00', onBreach: 'reject' }],
    });
    const rejected = await initiate(initiator, { debtorAccountId: refused, amount: '300.00' });
    expect((await finalStatusOf(initiator, rejected.paymentId)).statusReasonCode).toBe('AM04');
    await eventually(
      async () => ((await usageOf(admin, refused))[0]?.usedCount === 0 ? true : undefined),
      'the rejected transfer given back',
      30_000,
    );
    expect((await usageOf(admin, refused))[0]).toMatchObject({ usedAmount: '0.00', usedCount: 0 });

    // Held for approval, it holds its reservation; cancelled, it gives it back.
    const pending = await initiate(initiator, { debtorAccountId: account, amount: '600.00' });
    expect(pending.status).toBe('Pending');
    expect((await usageOf(admin, account))[0]).toMatchObject({ usedAmount: '600.00', usedCount: 1 });
    // 600 counted: 500 more would pass the day's 1000.
    expect((await initiate(initiator, { debtorAccountId: account, amount: '500.00' })).status).toBe(
      'Rejected',
    );
    const cancelled = await callApi(service.baseUrl, `${TRANSFERS}/${pending.paymentId}/cancellation`, {
      token: initiator.token,
      body: { cancellationReason: 'not needed' },
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(202);
    expect((await finalStatusOf(initiator, pending.paymentId)).status).toBe('Cancelled');
    await eventually(
      async () => ((await usageOf(admin, account))[0]?.usedCount === 0 ? true : undefined),
      'the cancelled transfer given back',
      30_000,
    );
    // The day's limit admits 500 again; a rejection by an approver gives back as well.
    const again = await initiate(initiator, { debtorAccountId: account, amount: '500.00' });
    expect(again.status).toBe('Pending');
    const decided = await callApi(service.baseUrl, `${TRANSFERS}/${again.paymentId}/approvals`, {
      token: approver.token,
      body: { decision: 'reject', reason: 'duplicate invoice' },
    });
    expect(decided.body.status).toBe('Rejected');
    await eventually(
      async () => ((await usageOf(admin, account))[0]?.usedCount === 0 ? true : undefined),
      'the rejected pending transfer given back',
      30_000,
    );
  }, 180_000);

  it('holds a transfer past a limit whose breach asks for approval; approved, it counts past the limit', async () => {
    const account = 'DE-LIMITS-APPROVE-1';
    const { initiator, approver, admin } = await tenantWith({
      limits: [
        { currency: 'EUR', period: 'transaction', maxAmount: '500.00', onBreach: 'approval' },
        dayLimit(account, { maxAmount: '700.00', onBreach: 'approval' }),
      ],
    });
    const small = await initiate(initiator, { debtorAccountId: account, amount: '400.00' });
    expect(small.status).toBe('Received');
    const large = await initiate(initiator, { debtorAccountId: account, amount: '800.00' });
    expect(large.status).toBe('Pending');
    expect(large.approval).toMatchObject({ rule: 'limit EUR 500.00 per transfer', approvalsRequired: 1 });
    // Waiting, it counts nowhere.
    expect((await usageOf(admin, account))[0]).toMatchObject({ usedAmount: '400.00', usedCount: 1 });
    // Approvers hear of it (its change to Pending published), and no workflow runs while it waits.
    await eventually(
      async () => {
        const events = await callApi(service.baseUrl, `/v1/events?paymentId.eq=${large.paymentId}`, {
          token: initiator.token,
        });
        return (events.body as { type: string }[]).some(
          (event) => event.type === 'credit-transfer.approval-required',
        )
          ? true
          : undefined;
      },
      'the change to Pending of the transfer held by a limit published',
      30_000,
    );
    expect(await executionsOf(large.paymentId)).toEqual([]);
    const approved = await callApi(service.baseUrl, `${TRANSFERS}/${large.paymentId}/approvals`, {
      token: approver.token,
      body: { decision: 'approve' },
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect((await finalStatusOf(initiator, large.paymentId)).status).toBe('AcceptedSettlementCompleted');
    expect((await usageOf(admin, account))[0]).toMatchObject({
      usedAmount: '1200.00',
      usedCount: 2,
      remainingAmount: '0.00',
    });
  }, 180_000);

  it('takes a transfer that names no currency as past the limits of its account: it cannot be counted in one', async () => {
    const rejecting = 'DE-LIMITS-NOCUR-1';
    const approving = 'DE-LIMITS-NOCUR-2';
    const { initiator, admin } = await tenantWith({
      approvalRules: [{ name: 'large EUR', currency: 'EUR', minimumAmount: '1000.00', approvalsRequired: 1 }],
      limits: [
        dayLimit(rejecting, { maxAmount: '1000000.00' }),
        { ...dayLimit(approving, { maxAmount: '1000000.00' }), onBreach: 'approval' },
      ],
    });
    const refused = await initiate(initiator, {
      debtorAccountId: rejecting,
      amount: '10.00',
      currency: undefined,
    });
    expect(refused).toMatchObject({ status: 'Rejected', statusReasonCode: 'AM14' });
    const held = await initiate(initiator, {
      debtorAccountId: approving,
      amount: '10.00',
      currency: undefined,
    });
    expect(held.status).toBe('Pending');
    expect((await usageOf(admin, approving))[0]).toMatchObject({ usedCount: 0 });
    // No limit on this account, yet a rule in EUR: without a currency it may be in EUR, so it is held.
    const unlimited = await initiate(initiator, {
      debtorAccountId: 'DE-LIMITS-NOCUR-3',
      amount: '5000.00',
      currency: undefined,
    });
    expect(unlimited).toMatchObject({ status: 'Pending', approval: { rule: 'large EUR' } });
  }, 60_000);

  it('shows one tenant nothing of another’s usage', async () => {
    const account = 'DE-LIMITS-TENANT-1';
    const limits = [dayLimit(account, { maxAmount: '1000.00' })];
    const first = await tenantWith({ limits });
    const second = await tenantWith({ limits });
    await initiate(first.initiator, { debtorAccountId: account, amount: '250.00' });
    expect((await usageOf(first.admin, account))[0]).toMatchObject({ usedAmount: '250.00', usedCount: 1 });
    expect((await usageOf(second.admin, account))[0]).toMatchObject({ usedAmount: '0.00', usedCount: 0 });
    const refused = await callApi(service.baseUrl, '/v1/payment-controls/usage?debtorAccountId=x', {
      token: first.admin.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.invalidParams).toEqual([expect.objectContaining({ name: 'currency' })]);
  }, 60_000);

  it('counts a batch’s transfers against the limits: those past a rejecting limit are Rejected (AM14), one by one', async () => {
    const account = 'DE-LIMITS-BATCH-1';
    const { initiator, approver, admin } = await tenantWith({
      approvalRules: [{ name: 'large', currency: 'EUR', minimumAmount: '900.00', approvalsRequired: 1 }],
      limits: [dayLimit(account, { maxAmount: '1500.00' })],
    });
    // 100 + 200 + 300 + 950 (held by the rule, counted while it waits) = 1550: the 300 breaks the day.
    const amounts = ['100.00', '200.00', '950.00', '300.00', '400.00'];
    const submitted = await callApi(service.baseUrl, '/v1/payments/credit-transfer-batches', {
      token: initiator.token,
      body: {
        creditTransfers: amounts.map((amount) =>
          minimalCreditTransfer({ amount, currency: 'EUR', debtorAccountId: account }),
        ),
      },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const { batchId } = submitted.body;
    const batchOf = async () =>
      (
        await callApi(service.baseUrl, `/v1/payments/credit-transfer-batches/${batchId}`, {
          token: initiator.token,
        })
      ).body as { status: string; creditTransfers: { status: string; statusReasonCode?: string }[] };
    const settled = await eventually(
      async () => {
        const batch = await batchOf();
        const statuses = batch.creditTransfers.map((transfer) => transfer.status);
        return statuses.every((status) => FINAL.has(status) || status === 'Pending') ? batch : undefined;
      },
      'the batch counted',
      90_000,
    );
    // Counted in the order the starter reaches them; whichever come last past 1500 are refused.
    const statuses = settled.creditTransfers.map((transfer) => transfer.status);
    expect(statuses[2]).toBe('Pending');
    const refused = settled.creditTransfers.filter((transfer) => transfer.status === 'Rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const transfer of refused) expect(transfer.statusReasonCode).toBe('AM14');
    const countedAmount = amounts
      .filter((_, index) => statuses[index] !== 'Rejected')
      .reduce((total, amount) => total + Number(amount), 0);
    expect(countedAmount).toBeLessThanOrEqual(1500);
    expect((await usageOf(admin, account))[0]).toMatchObject({
      usedAmount: `${countedAmount}.00`,
      usedCount: statuses.filter((status) => status !== 'Rejected').length,
    });
    // The held one, rejected by an approver, gives back what it counted; the batch completes.
    const held = (
      await callApi(service.baseUrl, `/v1/payments/credit-transfer-batches/${batchId}/approvals`, {
        token: approver.token,
        body: { decision: 'reject', reason: 'over budget' },
        headers: { 'Idempotency-Key': randomUUID() },
      })
    ).body;
    expect(held.decided, JSON.stringify(held)).toBe(1);
    await eventually(
      async () => ((await batchOf()).status === 'Completed' ? true : undefined),
      'the batch completed',
      90_000,
    );
    await eventually(
      async () =>
        (await usageOf(admin, account))[0]?.usedAmount === `${countedAmount - 950}.00` ? true : undefined,
      'the held transfer given back',
      30_000,
    );
  }, 180_000);

  it('a SIGKILL among racing initiations counts nothing twice and loses no release', async () => {
    const account = 'DE-LIMITS-KILL-1';
    const { tenant, initiator, admin } = await tenantWith({
      limits: [dayLimit(account, { maxCount: 25 })],
    });
    const keys = Array.from({ length: 60 }, (_, index) => `limits-kill-${tenant}-${index}`);
    const body = (index: number) => ({ debtorAccountId: account, amount: `${index + 1}.00` });
    let answered = 0;
    const burst = keys.map((key, index) =>
      callApi(service.baseUrl, TRANSFERS, {
        token: initiator.token,
        body: minimalCreditTransfer({ currency: 'EUR', ...body(index) }),
        headers: { 'Idempotency-Key': key },
      })
        .then(() => {
          answered += 1;
        })
        .catch(() => undefined),
    );
    await eventually(async () => (answered >= 10 ? true : undefined), 'the first answers', 30_000);
    await service.kill();
    await Promise.all(burst);
    await service.startAgain();
    // The clients retry what they were not answered, under the same key (as the SDK does).
    const again = {
      ...initiator,
      token: await requestToken(service.baseUrl, undefined, initiator),
    };
    const adminAgain = { ...admin, token: await requestToken(service.baseUrl, undefined, admin) };
    const transfers = await Promise.all(
      keys.map(async (key, index) => {
        const reply = await callApi(service.baseUrl, TRANSFERS, {
          token: again.token,
          body: minimalCreditTransfer({ currency: 'EUR', ...body(index) }),
          headers: { 'Idempotency-Key': key },
        });
        expect(reply.status, JSON.stringify(reply.body)).toBe(202);
        return reply.body;
      }),
    );
    const finals = await Promise.all(transfers.map(({ paymentId }) => finalStatusOf(again, paymentId)));
    const settled = finals.filter((report) => report.status === 'AcceptedSettlementCompleted');
    expect(settled).toHaveLength(25);
    expect(finals.filter((report) => report.status === 'Rejected')).toHaveLength(35);
    const sum = settled.reduce((total, report) => total + Number(report.amount ?? 0), 0);
    const [usage] = await usageOf(adminAgain, account);
    expect(usage).toMatchObject({ usedCount: 25, usedAmount: `${sum}.00` });
  }, 240_000);
});
