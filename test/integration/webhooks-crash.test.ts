import { Webhook } from 'standardwebhooks';
import { afterAll, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually, WebhookReceiver } from './support/webhook-receiver.ts';

const service = useLocalService({ token: true });
let receiver: WebhookReceiver | undefined;

afterAll(async () => {
  await receiver?.stop();
});

it('delivers after a restart what a runtime killed mid-delivery was sending (a first delivery, in no queue), with the same webhook-id', async () => {
  receiver = await new WebhookReceiver().start();
  let killed = false;
  // Until the kill, every delivery is held open: the service is mid-delivery when it dies.
  receiver.answer('/crash', () => (killed ? 200 : 'hold'));
  const { token } = service;
  const endpoint = await callApi(service.baseUrl, '/v1/webhook-endpoints', {
    token,
    body: { url: receiver.url('/crash') },
  });
  expect(endpoint.status).toBe(201);
  const initiated = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token,
    body: minimalCreditTransfer(),
  });
  expect(initiated.status).toBe(202);
  const paymentId = initiated.body.paymentId as string;
  const held = await eventually(() => receiver?.about('/crash', paymentId)[0], 'the first delivery attempt');

  await service.kill();
  killed = true;
  const heldBefore = receiver.about('/crash', paymentId).length;
  await service.startAgain();

  // The attempt cut short goes out again under the same id, answered this time; every other
  // change of the transfer is delivered too.
  const again = await eventually(
    () =>
      receiver
        ?.about('/crash', paymentId)
        .slice(heldBefore)
        .find((entry) => entry.headers['webhook-id'] === held.headers['webhook-id']),
    'the same event after the restart',
    60_000,
  );
  new Webhook(endpoint.body.secret).verify(again.rawBody, again.headers as Record<string, string>);
  expect(again.rawBody).toBe(held.rawBody);
  const statuses = await eventually(
    () => {
      const seen = new Set(receiver?.about('/crash', paymentId).map((entry) => entry.event.data.status));
      return seen.has('AcceptedSettlementCompleted') && seen.size === 5 ? seen : undefined;
    },
    'every status change after the restart',
    60_000,
  );
  expect(statuses.size).toBe(5);
  // The attempt held was a first delivery, kept in no queue and not recorded: the restart read the
  // status change again, found neither its attempt nor a queued delivery, and queued it.
}, 150_000);
