import { randomUUID } from 'node:crypto';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusEventId } from '#domain/credit-transfers/lifecycle';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually, WebhookReceiver } from './support/webhook-receiver.ts';

const STATUSES = [
  'Received',
  'AcceptedTechnicalValidation',
  'AcceptedCustomerProfile',
  'AcceptedSettlementInProcess',
  'AcceptedSettlementCompleted',
];

// Metrics printed (EMF lines on the service's output), so the count of dropped events is seen.
const service = useLocalService({ env: { POWERTOOLS_METRICS_DISABLED: 'false' }, token: true });
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver?.stop();
});

const eventsFile = () => join(service.dataDir, 'events.jsonl');

const initiate = async () => {
  const reply = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token: service.token,
    body: minimalCreditTransfer(),
  });
  expect(reply.status).toBe(202);
  return reply.body.paymentId as string;
};

const deliveredStatuses = (paymentId: string) =>
  eventually(() => {
    const statuses = new Set(receiver.about('/forged', paymentId).map((entry) => entry.event.data.status));
    return STATUSES.every((status) => statuses.has(status)) ? statuses : undefined;
  }, `every status change of ${paymentId}`);

// biome-ignore lint/suspicious/noExplicitAny: lines are read field by field
const busLines = async (): Promise<any[]> =>
  (await readFile(eventsFile(), 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));

/** The StatusEventsForged counts the service printed so far (CloudWatch embedded metric format). */
const forgedCount = (): number =>
  service
    .output()
    .split('\n')
    .filter((line) => line.includes('"StatusEventsForged"'))
    .map((line) => JSON.parse(line.slice(line.indexOf('{'))).StatusEventsForged as number | number[])
    .reduce<number>(
      (sum, value) => sum + (Array.isArray(value) ? value.reduce((a, b) => a + b, 0) : value),
      0,
    );

describe('the local event bus', () => {
  it('neither delivers nor lists a line that is no change of a stored transfer, and counts each one dropped', async () => {
    const registered = await callApi(service.baseUrl, '/v1/webhook-endpoints', {
      token: service.token,
      body: { url: receiver.url('/forged') },
    });
    expect(registered.status).toBe(201);
    const real = await initiate();
    await deliveredStatuses(real);
    const settled = (await busLines()).find(
      (line) => line.detail?.paymentId === real && line.detail.status === 'AcceptedSettlementCompleted',
    );
    expect(settled).toBeDefined();
    const { tenant } = settled.detail as { tenant: string };
    expect(forgedCount()).toBe(0);

    // Each as the service itself would write it (envelope, derived event id): only the table says no.
    const line = (detail: Record<string, unknown>) =>
      JSON.stringify({
        id: detail.eventId,
        source: settled.source,
        'detail-type': settled['detail-type'],
        time: detail.date,
        detail,
      });
    const forged = (paymentId: string, sequence: number, fields: Record<string, unknown>) => ({
      eventId: statusEventId(tenant, paymentId, sequence),
      tenant,
      paymentId,
      sequence,
      date: new Date().toISOString(),
      actor: 'rail',
      ...fields,
    });
    const missing = randomUUID();
    const forgeries = [
      // A transfer that does not exist.
      forged(missing, 4, {
        status: 'AcceptedSettlementCompleted',
        previousStatus: 'AcceptedSettlementInProcess',
      }),
      // A real transfer, with a status it never had.
      forged(real, 5, {
        status: 'Rejected',
        statusReason: 'InsufficientFunds',
        previousStatus: 'AcceptedSettlementCompleted',
      }),
      // A real transfer, a status it had, at a time it did not have it.
      forged(real, 5, {
        status: 'AcceptedSettlementCompleted',
        previousStatus: 'AcceptedSettlementCompleted',
        eventId: randomUUID(),
      }),
    ];
    await appendFile(eventsFile(), `${forgeries.map(line).join('\n')}\n`);

    // Another transfer after them: once all of its changes are delivered, the bus was read past the forgeries.
    const after = await initiate();
    await deliveredStatuses(after);
    await eventually(() => (forgedCount() >= forgeries.length ? true : undefined), 'the dropped count');
    expect(forgedCount()).toBe(forgeries.length);

    expect(receiver.about('/forged', missing)).toEqual([]);
    expect(
      receiver
        .about('/forged', real)
        .filter((entry) => entry.event.data.sequence > 4 || entry.event.data.status === 'Rejected'),
    ).toEqual([]);

    // Listed (recent events at once): the real changes, and nothing else.
    const listed = await eventually(
      async () => {
        const reply = await callApi(service.baseUrl, `/v1/events?paymentId.eq=${after}`, {
          token: service.token,
        });
        return reply.status === 200 && reply.body.length === STATUSES.length ? reply : undefined;
      },
      'the later transfer listed',
      60_000,
    );
    expect(listed.body).toHaveLength(STATUSES.length);
    const ofReal = await callApi(service.baseUrl, `/v1/events?paymentId.eq=${real}`, {
      token: service.token,
    });
    expect(ofReal.body.map((event: { data: { status: string } }) => event.data.status)).toEqual(STATUSES);
    const ofMissing = await callApi(service.baseUrl, `/v1/events?paymentId.eq=${missing}`, {
      token: service.token,
    });
    expect(ofMissing.status).toBe(200);
    expect(ofMissing.body).toEqual([]);
  }, 120_000);
});

describe('webhook signing secrets at rest', () => {
  it('stores only the sealed secret: the item read from the table holds nothing that signs', async () => {
    const registered = await callApi(service.baseUrl, '/v1/webhook-endpoints', {
      token: service.token,
      body: { url: receiver.url('/sealed') },
    });
    expect(registered.status).toBe(201);
    const { id, secret } = registered.body as { id: string; secret: string };
    const rotated = await callApi(service.baseUrl, `/v1/webhook-endpoints/${id}/secret-rotation`, {
      token: service.token,
      method: 'POST',
    });
    expect(rotated.status).toBe(200);
    const { Items = [] } = await service.table.scan({
      TableName: 'credit-transfers',
      FilterExpression: 'endpointId = :id',
      ExpressionAttributeValues: { ':id': id },
    });
    expect(Items).toHaveLength(1);
    const stored = JSON.stringify(Items[0]);
    for (const plain of [secret, rotated.body.secret as string]) {
      expect(stored).not.toContain(plain);
      expect(stored).not.toContain(plain.slice('whsec_'.length, 30));
    }
    const secrets = (Items[0] as { secrets: { sealed?: string; value?: string }[] }).secrets;
    expect(secrets).toHaveLength(2);
    for (const entry of secrets) {
      expect(entry.value).toBeUndefined();
      expect(entry.sealed).toMatch(/^v1\./);
    }
  });
});
