import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

// Slow clearing, so the kill finds transfers in every status.
const service = useLocalService({
  env: { SANDBOX_SETTLEMENT_SECONDS: '2', SANDBOX_HOLD_SECONDS: '120' },
  token: 'transactions:read transactions:write',
});

it('drives every transfer that got a 202 to a final state after the runtime is killed mid-flight', async () => {
  const { token } = service;
  const accounts = ['001-DDA-01-123456', '001-DDA-01-hold', '001-DDA-01-closed', '001-DDA-01-777777'];
  const replies = await Promise.all(
    Array.from({ length: 40 }, (_, index) =>
      callApi(service.baseUrl, TRANSFERS, {
        token,
        body: minimalCreditTransfer({
          debtorAccountId: accounts[index % accounts.length],
          amount: `${index + 1}.00`,
        }),
      }),
    ),
  );
  expect(replies.every((reply) => reply.status === 202)).toBe(true);
  // Cancel the held ones (clearing holds them long: the cancellation must win), then kill before
  // the cancellations can all be acted on.
  const held = replies.filter((_, index) => index % accounts.length === 1);
  for (const reply of held) {
    const cancelled = await callApi(service.baseUrl, `${TRANSFERS}/${reply.body.paymentId}/cancellation`, {
      method: 'POST',
      token,
    });
    expect(cancelled.status).toBe(202);
  }
  await service.kill();

  const { dataDir } = service;
  // The kill cut executions short: not every initiation's execution had ended. (The held ones
  // poll clearing for seconds at a time; the last one cancelled cannot have woken since.)
  const endedBefore = (await readFile(join(dataDir, 'executions.jsonl'), 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line !== '')
    .filter((line) => (JSON.parse(line) as { trigger: string }).trigger === 'initiation').length;
  expect(endedBefore).toBeLessThan(replies.length);

  await service.startAgain();
  const tokenAfter = await requestToken(service.baseUrl, 'transactions:read');
  // Far above what the settlement (2 s) takes, even on a slow machine; a transfer left behind
  // stays behind however long the wait.
  const deadline = Date.now() + 60_000;
  const pending = new Set(replies.map((reply) => reply.body.paymentId as string));
  const finals = new Map<string, { status: string; statusReason?: string }>();
  while (pending.size > 0 && Date.now() < deadline) {
    for (const paymentId of [...pending]) {
      const reply = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: tokenAfter });
      if (FINAL.has(reply.body.status)) {
        pending.delete(paymentId);
        finals.set(paymentId, reply.body);
      }
    }
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect([...pending]).toEqual([]);
  for (const reply of held) expect(finals.get(reply.body.paymentId)?.status).toBe('Cancelled');
  for (const [index, reply] of replies.entries()) {
    const final = finals.get(reply.body.paymentId);
    if (index % accounts.length === 2)
      expect(final).toMatchObject({ status: 'Rejected', statusReason: 'ClosedAccountNumber' });
    if (index % accounts.length === 0) expect(final?.status).toBe('AcceptedSettlementCompleted');
  }
}, 180_000);
