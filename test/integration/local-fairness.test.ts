import { expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * The local workflow runner shares its limits fairly: executions held for a value date wait
 * without counting against them, so one tenant's thousand transfers held for tomorrow keep no
 * other tenant's new transfer from settling today.
 */

const TRANSFERS = '/v1/payments/credit-transfers';
const HELD = 1000;
/** The bound the lifecycle tests give an ordinary transfer to settle. */
const WAIT_MS = 60_000;

const service = useLocalService();

const statusOf = async (token: string, paymentId: string): Promise<string> =>
  (await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token })).body.status;

/** Milliseconds from initiation until the transfer settles; fails past `timeoutMs`. */
const settleTime = async (token: string, timeoutMs: number): Promise<number> => {
  const started = Date.now();
  const created = await callApi(service.baseUrl, TRANSFERS, { token, body: minimalCreditTransfer() });
  expect(created.status).toBe(202);
  for (;;) {
    const status = await statusOf(token, created.body.paymentId);
    if (status === 'AcceptedSettlementCompleted') return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`still ${status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

it(`settles another tenant's new transfer as on an idle runtime while one tenant has ${HELD} transfers held for tomorrow`, async () => {
  const other = await requestToken(service.baseUrl, 'transactions:read transactions:write');
  const idleMs = await settleTime(other, WAIT_MS);

  await createClient(service, {
    clientId: 'holding-client',
    clientSecret: 'holding-client-secret-0123456789',
    scope: 'transactions:read transactions:write',
    tenant: 'holding',
  });
  const holding = await requestToken(service.baseUrl, 'transactions:read transactions:write', {
    clientId: 'holding-client',
    clientSecret: 'holding-client-secret-0123456789',
  });
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const held: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < HELD) {
        next++;
        const created = await callApi(service.baseUrl, TRANSFERS, {
          token: holding,
          body: minimalCreditTransfer({ valueDate: tomorrow }),
        });
        expect(created.status).toBe(202);
        held.push(created.body.paymentId);
      }
    }),
  );
  // Every one of them is held for its value date (past its checks, before submission).
  // Holding them is not what is measured: on a busy 2-core machine it has taken over 4 minutes.
  const deadline = Date.now() + 480_000;
  for (const paymentId of held.slice(-20)) {
    while ((await statusOf(holding, paymentId)) !== 'AcceptedCustomerProfile') {
      if (Date.now() > deadline) throw new Error(`${paymentId} not held in time`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const whileHeldMs = await settleTime(other, WAIT_MS);
  console.log(
    `settled in ${idleMs} ms idle, ${whileHeldMs} ms with ${HELD} transfers held by another tenant`,
  );
  // Still held: nothing of theirs moved on meanwhile.
  expect(await statusOf(holding, held[0] as string)).toBe('AcceptedCustomerProfile');
}, 900_000);
