import { expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, type JsonReply } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);
const COUNT = 200;

const service = useLocalService({ token: 'transactions:read transactions:write' });

const keyOf = (index: number) => `kill-${index}`;
const bodyOf = (index: number) => minimalCreditTransfer({ amount: `${index + 1}.00` });

it('keeps every acknowledged transfer through a SIGKILL mid-initiation: each 202 is found, ends final, one per idempotency key', async () => {
  const { token } = service;

  const acknowledged = new Map<number, string>();
  let answered = 0;
  const { baseUrl } = service;
  const requests = Array.from({ length: COUNT }, (_, index) =>
    callApi(baseUrl, TRANSFERS, { token, body: bodyOf(index), headers: { idempotencyId: keyOf(index) } })
      .then((reply) => {
        answered += 1;
        if (reply.status === 202) acknowledged.set(index, reply.body.paymentId);
      })
      // Cut off by the kill: no answer, so nothing was promised.
      .catch(() => undefined),
  );
  while (answered < COUNT / 10) await new Promise((resolve) => setTimeout(resolve, 2));
  await service.kill();
  await Promise.all(requests);
  // The kill came mid-way: some requests were acknowledged, some never answered.
  expect(acknowledged.size).toBeGreaterThan(0);
  expect(acknowledged.size).toBeLessThan(COUNT);
  const promised = new Map(acknowledged);

  await service.startAgain();
  const after = service.token;

  // Every 202 is there, under the paymentId it gave, and reaches a final status.
  const pending = new Map(promised);
  const deadline = Date.now() + 60_000;
  while (pending.size > 0 && Date.now() < deadline) {
    for (const [index, paymentId] of [...pending]) {
      const reply: JsonReply = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, {
        token: after,
      });
      expect(reply.status, `${keyOf(index)} ${paymentId}`).toBe(200);
      expect(reply.body.paymentId).toBe(paymentId);
      if (FINAL.has(reply.body.status)) pending.delete(index);
    }
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect([...pending.values()]).toEqual([]);

  // The same request again with each key: an acknowledged one answers its own transfer; every
  // key ends with exactly one transfer.
  for (let index = 0; index < COUNT; index++) {
    const reply = await callApi(service.baseUrl, TRANSFERS, {
      token: after,
      body: bodyOf(index),
      headers: { idempotencyId: keyOf(index) },
    });
    expect(reply.status, keyOf(index)).toBe(202);
    const paymentId = promised.get(index);
    if (paymentId !== undefined) {
      expect(reply.body.paymentId, keyOf(index)).toBe(paymentId);
      expect(reply.headers.get('idempotent-replayed')).toBe('true');
    }
  }
  const listed: { amount: string; paymentId: string }[] = [];
  let cursor = '';
  do {
    const query = new URLSearchParams({ limit: '100', ...(cursor && { cursor }) });
    const page = await callApi(service.baseUrl, `${TRANSFERS}?${query}`, { token: after });
    // On a failure, what the service logged says why.
    expect(page.status, `${JSON.stringify(page.body)}\n${service.output().slice(-4000)}`).toBe(200);
    listed.push(...page.body);
    cursor = page.headers.get('pagination-cursor') ?? '';
  } while (cursor !== '');
  const amounts = listed.map((transfer) => transfer.amount);
  expect(new Set(amounts).size).toBe(amounts.length);
  expect(listed).toHaveLength(COUNT);
}, 180_000);
