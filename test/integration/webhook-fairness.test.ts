import { expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually, WebhookReceiver } from './support/webhook-receiver.ts';

/**
 * One tenant's backlog of webhook deliveries never holds another tenant's retries back, on the
 * local runtime with a real receiver: tenant A's ten endpoints never answer (each attempt lasts its
 * 10 s limit, 16 of A's at once) and a thousand of its deliveries are queued; tenant B's endpoint
 * fails each event's first attempt, and every retry (due a second later) arrives while A's backlog
 * has not even had one attempt each. Before, a look at the queue read the hundred oldest due
 * deliveries whatever their tenant (all A's, whose tenant was at its limit), and B's retries
 * waited behind A's backlog: about 10 minutes here.
 */

const TRANSFERS = '/v1/payments/credit-transfers';
const A_ENDPOINTS = 10;
const A_TRANSFERS = 20;
/** Five status events per transfer, to each endpoint. */
const A_DELIVERIES = A_TRANSFERS * 5 * A_ENDPOINTS;
/** Generous on a loaded machine, and far below what A's backlog takes to drain (see above). */
const WAIT_MS = 240_000;

const service = useLocalService({
  env: { WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1,1,1,1,1', WEBHOOK_DISABLE_AFTER_SECONDS: '86400' },
  token: true,
});

it("delivers tenant B's retries while tenant A's thousand queued deliveries wait on ten endpoints that never answer", async () => {
  const receiver = await new WebhookReceiver().start();
  try {
    await createClient(service, {
      clientId: 'backlogged-client',
      clientSecret: 'backlogged-client-secret-0123456789',
      scope: 'transactions:read transactions:write webhooks:manage',
      tenant: 'backlogged',
    });
    const tokenA = await requestToken(
      service.baseUrl,
      'transactions:read transactions:write webhooks:manage',
      {
        clientId: 'backlogged-client',
        clientSecret: 'backlogged-client-secret-0123456789',
      },
    );
    for (let index = 0; index < A_ENDPOINTS; index++) {
      receiver.answer(`/a/${index}`, () => 'hold');
      const created = await callApi(service.baseUrl, '/v1/webhook-endpoints', {
        token: tokenA,
        body: { url: receiver.url(`/a/${index}`) },
      });
      expect(created.status).toBe(201);
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < A_TRANSFERS) {
          next++;
          const created = await callApi(service.baseUrl, TRANSFERS, {
            token: tokenA,
            body: minimalCreditTransfer(),
          });
          expect(created.status).toBe(202);
        }
      }),
    );
    // A's backlog is queued: its first deliveries found no place (the endpoints never answer).
    const queuedOfA = async () => {
      let count = 0;
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await service.table.scan({
          TableName: 'credit-transfers',
          FilterExpression: '#type = :delivery AND tenant = :tenant AND #state = :queued',
          ExpressionAttributeNames: { '#type': 'type', '#state': 'state' },
          ExpressionAttributeValues: {
            ':delivery': 'WebhookDelivery',
            ':tenant': 'backlogged',
            ':queued': 'queued',
          },
          ...(startKey !== undefined && { ExclusiveStartKey: startKey }),
        });
        count += page.Count ?? 0;
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
      return count;
    };
    await eventually(
      async () => ((await queuedOfA()) >= A_DELIVERIES / 2 ? true : undefined),
      "half of A's deliveries queued",
      WAIT_MS,
    );

    const backlogQueuedAt = Date.now();
    receiver.answer('/b', (_received, seenBefore) => (seenBefore === 0 ? 500 : 204));
    const endpointB = await callApi(service.baseUrl, '/v1/webhook-endpoints', {
      token: service.token,
      body: { url: receiver.url('/b') },
    });
    expect(endpointB.status).toBe(201);
    const created = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer(),
    });
    expect(created.status).toBe(202);
    const paymentId = created.body.paymentId as string;

    // Every status change of B's transfer: its first attempt failed, and its retry came.
    const retried = await eventually(
      () => {
        const about = receiver.about('/b', paymentId);
        const ids = new Set(about.map((received) => received.headers['webhook-id']));
        const final = about.some(
          (received) => received.event?.data?.status === 'AcceptedSettlementCompleted',
        );
        const everyRetried = [...ids].every(
          (id) => about.filter((received) => received.headers['webhook-id'] === id).length >= 2,
        );
        return final && everyRetried ? ids.size : undefined;
      },
      "B's retries",
      WAIT_MS,
    );
    expect(retried).toBeGreaterThanOrEqual(5);
    const ofB = receiver.about('/b', paymentId);
    const lateness = [...new Set(ofB.map((received) => received.headers['webhook-id']))].map((id) => {
      const [first, retry] = ofB.filter((received) => received.headers['webhook-id'] === id);
      return (retry?.at ?? 0) - (first?.at ?? 0) - 1_000;
    });
    console.log(
      `B's webhooks all retried ${Date.now() - backlogQueuedAt} ms after A's backlog was queued; each retry's lateness (ms): ${lateness.join(', ')}`,
    );

    // All the while, A's backlog waited: not even one attempt each yet, most of it still queued.
    const attemptsOfA = receiver.received.filter((received) => received.path.startsWith('/a/')).length;
    expect(attemptsOfA).toBeLessThan(A_DELIVERIES);
    expect(await queuedOfA()).toBeGreaterThan(A_DELIVERIES / 4);
  } finally {
    await receiver.stop();
  }
}, 900_000);
