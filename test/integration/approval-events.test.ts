import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually, type ReceivedWebhook, WebhookReceiver } from './support/webhook-receiver.ts';

const service = useLocalService();
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver?.stop();
});

const TRANSFERS = '/v1/payments/credit-transfers';
const APPROVAL_REQUIRED = 'credit-transfer.approval-required';
const APPROVED = 'credit-transfer.approved';
const STATUS_CHANGED = 'credit-transfer.status-changed';

interface Client {
  clientId: string;
  token: string;
}

const clientOf = async (tenant: string, scope: string): Promise<Client> => {
  const clientId = `approval-events-${randomUUID()}`;
  const clientSecret = `${clientId}-secret`;
  await createClient(service, { clientId, clientSecret, scope, tenant });
  return { clientId, token: await requestToken(service.baseUrl, undefined, { clientId, clientSecret }) };
};

/**
 * A tenant of its own whose EUR transfers need two approvals, with two webhook endpoints on the
 * receiver: one that picks the approval events only, one the status changes only.
 */
const tenantWithEndpoints = async () => {
  const tenant = `approval-events-${randomUUID().slice(0, 8)}`;
  const [initiator, first, second, admin] = await Promise.all([
    clientOf(tenant, 'transactions:read transactions:write'),
    clientOf(tenant, 'transactions:read transactions:approve'),
    clientOf(tenant, 'transactions:read transactions:approve'),
    clientOf(tenant, 'payment-controls:manage webhooks:manage transactions:read'),
  ]);
  const controls = await callApi(service.baseUrl, '/v1/payment-controls', {
    method: 'PUT',
    token: admin.token,
    body: { approvalRules: [{ name: 'EUR payments', currency: 'EUR', approvalsRequired: 2 }] },
  });
  expect(controls.status, JSON.stringify(controls.body)).toBe(200);
  const paths = { approvals: `/${tenant}/approvals`, statuses: `/${tenant}/statuses` };
  for (const [path, eventTypes] of [
    [paths.approvals, [APPROVAL_REQUIRED, APPROVED]],
    [paths.statuses, [STATUS_CHANGED]],
  ] as const) {
    const endpoint = await callApi(service.baseUrl, '/v1/webhook-endpoints', {
      token: admin.token,
      body: { url: receiver.url(path), eventTypes },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  }
  return { initiator, first, second, admin, paths };
};

const initiate = async (as: Client): Promise<string> => {
  const reply = await callApi(service.baseUrl, TRANSFERS, {
    token: as.token,
    body: minimalCreditTransfer({ currency: 'EUR' }),
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(202);
  expect(reply.body.status).toBe('Pending');
  return reply.body.paymentId;
};

const decide = async (as: Client, paymentId: string, decision: 'approve' | 'reject') => {
  const reply = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/approvals`, {
    token: as.token,
    body: { decision },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
};

/** The first webhook at `path` about the transfer that `matches`, once it came. */
// biome-ignore lint/suspicious/noExplicitAny: tests read events field by field
const delivered = (path: string, paymentId: string, what: string, matches: (event: any) => boolean) =>
  eventually(
    () => receiver.about(path, paymentId).find((received) => matches(received.event)),
    `${what} of ${paymentId} at ${path}`,
    60_000,
  );

/** The workflow executions of a transfer the local runtime ran so far (its execution history). */
const executionsOf = async (paymentId: string) =>
  (await readFile(join(service.dataDir, 'executions.jsonl'), 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { paymentId: string; trigger: string })
    .filter((execution) => execution.paymentId === paymentId);

/** Each event received once per id (a redelivery repeats its id). */
const distinct = (received: readonly ReceivedWebhook[]) => [
  ...new Map(received.map((entry) => [entry.event.id, entry.event])).values(),
];

describe('approval events and webhooks', () => {
  it('tells a transfer waits for approval at once, and that two approvals moved it on, once each; the status changes to and from Pending carry the approval', async () => {
    const { initiator, first, second, admin, paths } = await tenantWithEndpoints();
    const paymentId = await initiate(initiator);

    // Before anyone decided: the approval-required event, and the change to Pending with the same approval.
    const required = await delivered(
      paths.approvals,
      paymentId,
      'approval-required',
      (event) => event.type === APPROVAL_REQUIRED,
    );
    const pendingStatus = (
      await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: initiator.token })
    ).body;
    expect(pendingStatus.status).toBe('Pending');
    expect(required.event.data).toEqual({
      paymentId,
      date: pendingStatus.date,
      sequence: 0,
      approval: { ...pendingStatus.approval, approvals: [] },
    });
    expect(required.event.data.approval).toMatchObject({ rule: 'EUR payments', approvalsRequired: 2 });
    const toPending = await delivered(
      paths.statuses,
      paymentId,
      'the change to Pending',
      (event) => event.data.status === 'Pending',
    );
    expect(toPending.event.data.approval).toEqual(required.event.data.approval);
    // Announced with no workflow execution: none runs while it waits for approval.
    expect(await executionsOf(paymentId)).toEqual([]);

    await decide(first, paymentId, 'approve');
    await decide(second, paymentId, 'approve');

    const approved = await delivered(
      paths.approvals,
      paymentId,
      'approved',
      (event) => event.type === APPROVED,
    );
    expect(approved.event.data.sequence).toBe(1);
    expect(
      approved.event.data.approval.approvals.map((entry: { clientId: string }) => entry.clientId).sort(),
    ).toEqual([first.clientId, second.clientId].sort());
    const fromPending = await delivered(
      paths.statuses,
      paymentId,
      'the change from Pending',
      (event) => event.data.previousStatus === 'Pending',
    );
    expect(fromPending.event.data).toMatchObject({
      status: 'Received',
      sequence: 1,
      date: approved.event.data.date,
    });
    expect(fromPending.event.data.approval).toEqual(approved.event.data.approval);

    // The rest of the lifecycle: status changes without an approval, and no more approval events.
    const settled = await delivered(
      paths.statuses,
      paymentId,
      'settlement',
      (event) => event.data.status === 'AcceptedSettlementCompleted',
    );
    expect(settled.event.data.approval).toBeUndefined();
    const told = distinct(receiver.about(paths.approvals, paymentId));
    expect(told.map((event) => event.type)).toEqual([APPROVAL_REQUIRED, APPROVED]);
    expect(
      distinct(receiver.about(paths.statuses, paymentId)).every((event) => event.type === STATUS_CHANGED),
    ).toBe(true);

    // The events API lists the same bodies, and filters by the new types.
    for (const [type, webhook] of [
      [APPROVAL_REQUIRED, required],
      [APPROVED, approved],
    ] as const) {
      const listed = await callApi(service.baseUrl, `/v1/events?type=${type}&paymentId.eq=${paymentId}`, {
        token: admin.token,
      });
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
      expect(listed.body).toEqual([webhook.event]);
    }
  }, 120_000);

  it('tells a rejection by the status change from Pending, with the rejecting decision, and no approved event', async () => {
    const { initiator, first, paths } = await tenantWithEndpoints();
    const paymentId = await initiate(initiator);
    await delivered(
      paths.approvals,
      paymentId,
      'approval-required',
      (event) => event.type === APPROVAL_REQUIRED,
    );

    await decide(first, paymentId, 'reject');

    const rejected = await delivered(
      paths.statuses,
      paymentId,
      'the rejection',
      (event) => event.data.status === 'Rejected',
    );
    expect(rejected.event.data).toMatchObject({ previousStatus: 'Pending', statusReason: 'OrderCancelled' });
    expect(rejected.event.data.approval.approvals).toEqual([
      expect.objectContaining({ clientId: first.clientId, decision: 'reject' }),
    ]);
    expect(distinct(receiver.about(paths.approvals, paymentId)).map((event) => event.type)).toEqual([
      APPROVAL_REQUIRED,
    ]);
  }, 120_000);
});
