import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { creditTransferKey, sandboxClearingKey } from '#adapters/table/keys';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, type JsonReply, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

const initiate = (body: Record<string, unknown> = {}) =>
  callApi(service.baseUrl, TRANSFERS, { token: service.token, body: minimalCreditTransfer(body) });
const status = (paymentId: string) =>
  callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: service.token });
const cancel = (
  paymentId: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string>; token?: string } = {},
) =>
  callApi(service.baseUrl, `${TRANSFERS}/${encodeURIComponent(paymentId)}/cancellation`, {
    method: 'POST',
    token: options.token ?? service.token,
    ...options,
  });

/** Polls the status report every `intervalMs` until `done` holds; fails after `timeoutMs`. */
const until = async (
  paymentId: string,
  done: (reply: JsonReply) => boolean,
  timeoutMs: number,
  intervalMs = 50,
) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await status(paymentId);
    if (done(reply)) return reply;
    if (Date.now() > deadline) throw new Error(`${paymentId} is ${reply.body?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
};
/**
 * Polling bounds are far above what each step takes, and far below the clearing hold
 * (HOLD_SECONDS): a slow machine still passes, a transfer left waiting for the hold still fails.
 */
const WAIT_MS = 60_000;
const HOLD_SECONDS = 600;
const untilFinal = (paymentId: string, timeoutMs = WAIT_MS) =>
  until(paymentId, (reply) => FINAL.has(reply.body?.status), timeoutMs);

const storedItem = async (paymentId: string) =>
  (
    await service.table.get({
      TableName: 'credit-transfers',
      Key: creditTransferKey('local', paymentId),
      ConsistentRead: true,
    })
  ).Item ?? {};

/** Sandbox clearing's record of the payment, read from the service's table: what clearing did with it. */
const clearingStateOf = async (paymentId: string): Promise<string> => {
  const { Item } = await service.table.get({
    TableName: 'credit-transfers',
    Key: sandboxClearingKey('local', paymentId),
    ConsistentRead: true,
  });
  if (Item === undefined) return 'never submitted';
  if (Item.recalledAt !== undefined) return 'recalled';
  return Item.settledAt !== undefined ? 'settled' : 'pending';
};

interface ExecutionLine {
  name: string;
  type: 'EXPRESS' | 'STANDARD';
  paymentId: string;
  trigger: string;
  status: string;
  error?: string;
}

/** The local execution history: one line per finished workflow execution. */
const executionLines = async (): Promise<ExecutionLine[]> =>
  (await readFile(join(service.dataDir, 'executions.jsonl'), 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ExecutionLine);

const eventsOf = async (paymentId: string) =>
  (await readFile(join(service.dataDir, 'events.jsonl'), 'utf8'))
    .split('\n')
    .filter((line) => line.includes(paymentId))
    .map((line) => JSON.parse(line) as { id: string; detail: { status: string; sequence: number } });

/** The transfer's events once `done` holds of them, or as they are when WAIT_MS has passed. */
const eventsWhen = async (
  paymentId: string,
  done: (events: Awaited<ReturnType<typeof eventsOf>>) => boolean,
) => {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const events = await eventsOf(paymentId);
    if (done(events) || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

const service = useLocalService({
  env: { SANDBOX_HOLD_SECONDS: String(HOLD_SECONDS) },
  token: 'transactions:read transactions:write',
});

describe('payment lifecycle on the local runtime', () => {
  it('settles an ordinary transfer and publishes every change to events.jsonl', async () => {
    const created = await initiate();
    expect(created.status).toBe(202);
    const settled = await untilFinal(created.body.paymentId);
    expect(settled.body).toMatchObject({
      status: 'AcceptedSettlementCompleted',
      paymentId: created.body.paymentId,
    });
    expect(settled.body.statusReason).toBeUndefined();

    const history = (await storedItem(created.body.paymentId)).history as { status: string }[];
    expect(history.map((entry) => entry.status)).toEqual([
      'Received',
      'AcceptedTechnicalValidation',
      'AcceptedCustomerProfile',
      'AcceptedSettlementInProcess',
      'AcceptedSettlementCompleted',
    ]);
    const events = await eventsOf(created.body.paymentId);
    expect(events.map((event) => event.detail.status)).toEqual(history.map((entry) => entry.status));
  });

  it('rejects a transfer from a blocked account with statusReason BlockedAccount', async () => {
    const created = await initiate({ debtorAccountId: '001-DDA-01-blocked' });
    const rejected = await untilFinal(created.body.paymentId);
    expect(rejected.body).toMatchObject({
      status: 'Rejected',
      statusReason: 'BlockedAccount',
      statusReasonCode: 'AC06',
    });
  });
});

describe('long waits', () => {
  it('hands a transfer with a future valueDate over to the Standard machine (the fast path starting it under the local IAM check); a cancellation during the hold wins', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const created = await initiate({ valueDate: tomorrow });
    expect(created.status).toBe(202);
    const { paymentId } = created.body;
    await until(paymentId, (reply) => reply.body?.status === 'AcceptedCustomerProfile', WAIT_MS);
    // The fast path ended once it had handed the hold over: the Standard execution holds it now.
    const deadline = Date.now() + WAIT_MS;
    let fastPath: ExecutionLine | undefined;
    while (fastPath === undefined && Date.now() < deadline) {
      fastPath = (await executionLines()).find((line) => line.paymentId === paymentId);
      if (fastPath === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(fastPath).toMatchObject({ type: 'EXPRESS', trigger: 'initiation', status: 'SUCCEEDED' });

    expect((await cancel(paymentId)).status).toBe(202);
    const cancelled = await untilFinal(paymentId);
    expect(cancelled.body).toMatchObject({ status: 'Cancelled', statusReason: 'RequestedByCustomer' });
    expect(await clearingStateOf(paymentId)).toBe('never submitted');
  });
});

describe('credit transfer cancellation', () => {
  it('accepts the cancellation of a held transfer with 202 and its current body, then ends it Cancelled without waiting for clearing', async () => {
    const created = await initiate({ debtorAccountId: '001-DDA-01-hold' });
    const inSettlement = await until(
      created.body.paymentId,
      (reply) => reply.body.status === 'AcceptedSettlementInProcess',
      WAIT_MS,
    );

    const accepted = await cancel(created.body.paymentId, { body: { cancellationReason: 'Ordered twice' } });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('content-type')).toContain('application/json');
    expect(accepted.body).toEqual(inSettlement.body);

    // Clearing holds it for HOLD_SECONDS, far longer than untilFinal waits: only the recall ends it.
    const cancelled = await untilFinal(created.body.paymentId);
    expect(await clearingStateOf(created.body.paymentId)).toBe('recalled');
    expect(cancelled.body).toMatchObject({
      status: 'Cancelled',
      statusReason: 'RequestedByCustomer',
      statusReasonCode: 'CUST',
    });

    const item = await storedItem(created.body.paymentId);
    expect(item.cancellation).toMatchObject({ reason: 'Ordered twice', clientId: 'it-client' });
    expect((item.history as { status: string; actor: string }[]).at(-1)).toMatchObject({
      status: 'Cancelled',
      actor: 'it-client',
    });

    // Already cancelled: 202 again, same body.
    const again = await cancel(created.body.paymentId);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(cancelled.body);
  });

  it('accepts a cancellation without a body', async () => {
    const created = await initiate({ debtorAccountId: '001-DDA-01-hold' });
    const reply = await cancel(created.body.paymentId);
    expect(reply.status).toBe(202);
    expect(reply.body.paymentId).toBe(created.body.paymentId);
    expect((await untilFinal(created.body.paymentId)).body.status).toBe('Cancelled');
  });

  it('replays a repeated cancellation with the same idempotencyId, and refuses the key with another reason', async () => {
    const created = await initiate({ debtorAccountId: '001-DDA-01-hold' });
    const headers = { idempotencyId: 'cancel-key-1' };
    const first = await cancel(created.body.paymentId, { body: { cancellationReason: 'first' }, headers });
    const replay = await cancel(created.body.paymentId, { body: { cancellationReason: 'first' }, headers });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const reused = await cancel(created.body.paymentId, { body: { cancellationReason: 'other' }, headers });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toBe('idempotency_key_reused');
  });

  it('answers 409 payment_not_cancellable for a settled or rejected transfer', async () => {
    const settled = await initiate();
    const rejected = await initiate({ debtorAccountId: '001-DDA-01-nofunds' });
    await untilFinal(settled.body.paymentId);
    await untilFinal(rejected.body.paymentId);
    for (const paymentId of [settled.body.paymentId, rejected.body.paymentId]) {
      const reply = await cancel(paymentId, { body: { cancellationReason: 'too late' } });
      expect(reply.status).toBe(409);
      expect(reply.headers.get('content-type')).toContain('application/problem+json');
      expect(reply.body.error).toBe('payment_not_cancellable');
    }
    expect((await status(settled.body.paymentId)).body.status).toBe('AcceptedSettlementCompleted');
  });

  it("answers 404 for an unknown paymentId and for another tenant's", async () => {
    const unknown = await cancel('00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('not_found');

    const other = { clientId: 'lifecycle-other-tenant', clientSecret: 'lifecycle-other-secret-0123456789' };
    await createClient(service, { ...other, scope: 'transactions:read transactions:write', tenant: 'other' });
    const otherToken = await requestToken(service.baseUrl, 'transactions:write', other);
    const mine = await initiate({ debtorAccountId: '001-DDA-01-hold' });
    const foreign = await cancel(mine.body.paymentId, { token: otherToken });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(
      expect.objectContaining({ error: 'not_found', status: 404, type: unknown.body.type }),
    );
    expect((await status(mine.body.paymentId)).body.status).not.toBe('Cancelled');
  });

  it('answers 400 naming the field for a reason too long, an unknown field or a bad header', async () => {
    const created = await initiate({ debtorAccountId: '001-DDA-01-hold' });
    const cases: [string, Parameters<typeof cancel>[1], string][] = [
      ['reason too long', { body: { cancellationReason: 'x'.repeat(1026) } }, 'cancellationReason'],
      ['empty reason', { body: { cancellationReason: '' } }, 'cancellationReason'],
      ['unknown field', { body: { reason: 'typo' } }, 'reason'],
      ['idempotencyId too long', { headers: { idempotencyId: 'k'.repeat(37) } }, 'idempotencyId'],
      ['servicerId too long', { headers: { servicerId: 's'.repeat(37) } }, 'servicerId'],
    ];
    for (const [label, options, field] of cases) {
      const reply = await cancel(created.body.paymentId, options);
      expect(reply.status, label).toBe(400);
      expect(reply.body.error, label).toBe('invalid_request');
      expect(
        reply.body.invalidParams.map((param: { name: string }) => param.name),
        label,
      ).toContain(field);
    }
    // Nothing was recorded by the refused requests.
    expect((await storedItem(created.body.paymentId)).cancellation).toBeUndefined();
  });

  it('needs the transactions:write scope', async () => {
    const created = await initiate({ debtorAccountId: '001-DDA-01-hold' });
    const readOnly = await requestToken(service.baseUrl, 'transactions:read');
    const reply = await cancel(created.body.paymentId, { token: readOnly });
    expect(reply.status).toBe(403);
  });
});

describe('cancellations racing settlement', () => {
  it('ends each transfer in exactly one final state, consistent with its history and its events', async () => {
    const count = 40;
    const outcomes = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        // Two outcomes made certain whatever the machine's speed: held by clearing (the
        // cancellation wins), and settled before the cancellation (it is refused).
        const held = index % 8 === 1;
        const created = await initiate({
          amount: '5.00',
          ...(held && { debtorAccountId: '001-DDA-01-hold' }),
        });
        expect(created.status).toBe(202);
        if (index % 8 === 0) {
          await until(created.body.paymentId, (reply) => FINAL.has(reply.body?.status), WAIT_MS);
        } else if (index % 2 === 0) {
          // Anywhere from before the first step to well after settlement (about 1 s).
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 3000));
        } else {
          // Around the customer-profile check and the submission to clearing that follows it.
          await until(created.body.paymentId, (reply) => reply.body.status !== 'Received', WAIT_MS, 5);
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
        }
        const cancellation = await cancel(created.body.paymentId);
        return { paymentId: created.body.paymentId as string, cancellation };
      }),
    );

    const finals = await Promise.all(outcomes.map(({ paymentId }) => untilFinal(paymentId)));
    const statuses = new Set<string>();
    for (const [index, { paymentId, cancellation }] of outcomes.entries()) {
      const final = finals[index]?.body.status as string;
      statuses.add(final);
      expect(['AcceptedSettlementCompleted', 'Cancelled']).toContain(final);
      expect([202, 409]).toContain(cancellation.status);
      // A refused cancellation found the transfer settled already.
      if (cancellation.status === 409) expect(final).toBe('AcceptedSettlementCompleted');

      const item = await storedItem(paymentId);
      const history = (item.history as { status: string }[]).map((entry) => entry.status);
      expect(history.at(-1)).toBe(final);
      expect(history.filter((entry) => FINAL.has(entry))).toEqual([final]);
      // Each status at most once, in lifecycle order.
      expect(new Set(history).size).toBe(history.length);
      if (final === 'Cancelled') expect(item.cancellation).toBeDefined();

      // Events go out in the step after the status write: wait for them, within the lifecycle's bound.
      const events = await eventsWhen(
        paymentId,
        (found) => new Set(found.map((event) => event.id)).size >= history.length,
      );
      expect(new Set(events.map((event) => event.id)).size).toBe(history.length);
      expect(
        events.filter((event) => FINAL.has(event.detail.status)).map((event) => event.detail.status),
      ).toContain(final);

      // Clearing agrees: a cancelled payment never reached it or was recalled, a completed one settled.
      const clearing = await clearingStateOf(paymentId);
      if (final === 'Cancelled') expect(['never submitted', 'recalled'], paymentId).toContain(clearing);
      else expect(clearing, paymentId).toBe('settled');
    }
    // Both outcomes occur (the certain ones above make sure of it).
    expect(statuses.size).toBe(2);

    // Every execution of these transfers ended, and none failed: one from the initiation, one
    // from each cancellation that got a 202.
    const ours = new Set(outcomes.map(({ paymentId }) => paymentId));
    const expected =
      outcomes.length + outcomes.filter(({ cancellation }) => cancellation.status === 202).length;
    const deadline = Date.now() + WAIT_MS;
    let finished = (await executionLines()).filter((line) => ours.has(line.paymentId));
    while (finished.length < expected && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      finished = (await executionLines()).filter((line) => ours.has(line.paymentId));
    }
    expect(finished.filter((line) => line.status !== 'SUCCEEDED')).toEqual([]);
    expect(finished).toHaveLength(expected);
  });
});
