import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SETTLE_MS } from '#domain/webhooks/webhook-event';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually, WebhookReceiver } from './support/webhook-receiver.ts';

const ENDPOINTS = '/v1/webhook-endpoints';
const STATUSES = [
  'Received',
  'AcceptedTechnicalValidation',
  'AcceptedCustomerProfile',
  'AcceptedSettlementInProcess',
  'AcceptedSettlementCompleted',
];

// Short retries, so a failing receiver is tried again within the test.
const service = useLocalService({ env: { WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1' }, token: true });
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
});

afterAll(async () => {
  await receiver?.stop();
});

const register = async (path: string, extra: Record<string, unknown> = {}, as = service.token) => {
  const reply = await callApi(service.baseUrl, ENDPOINTS, {
    token: as,
    body: { url: receiver.url(path), ...extra },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body as { id: string; secret: string; url: string };
};

const remove = (id: string, as = service.token) =>
  callApi(service.baseUrl, `${ENDPOINTS}/${id}`, { token: as, method: 'DELETE' });

const initiate = async (as = service.token, overrides: Record<string, unknown> = {}) => {
  const reply = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token: as,
    body: minimalCreditTransfer(overrides),
  });
  expect(reply.status).toBe(202);
  return reply.body.paymentId as string;
};

/** Waits until `path` got every status change of the transfer at least once; answers them in order. */
const allChangesOf = (path: string, paymentId: string) =>
  eventually(() => {
    const received = receiver.about(path, paymentId);
    const statuses = new Set(received.map((entry) => entry.event.data.status));
    return STATUSES.every((status) => statuses.has(status))
      ? [...received].sort((a, b) => a.event.data.sequence - b.event.data.sequence)
      : undefined;
  }, `every status change of ${paymentId} at ${path}`);

/** The events list's answer once `ready` says it holds what is expected (recent events at once). */
// biome-ignore lint/suspicious/noExplicitAny: tests read events field by field
const listedEvents = (query: string, ready: (events: any[]) => boolean, as = service.token) =>
  eventually(
    async () => {
      const reply = await callApi(service.baseUrl, `/v1/events${query}`, { token: as });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return ready(reply.body) ? reply : undefined;
    },
    `the events list ${query}`,
    60_000,
  );

describe('webhooks on the local runtime', () => {
  it('delivers every status change, signed so the Standard Webhooks library verifies it; the events API holds the same bodies', async () => {
    const endpoint = await register('/signed', { description: 'ledger' });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const paymentId = await initiate();
    const received = await allChangesOf('/signed', paymentId);

    const verifier = new Webhook(endpoint.secret);
    for (const delivery of received) {
      // Verified on the raw body, as a receiver must, before any JSON parser touches it.
      const verified = verifier.verify(delivery.rawBody, delivery.headers as Record<string, string>) as {
        id: string;
      };
      expect(verified.id).toBe(delivery.headers['webhook-id']);
      expect(delivery.event.type).toBe('credit-transfer.status-changed');
    }
    const unique = [...new Map(received.map((delivery) => [delivery.event.id, delivery])).values()];
    expect(unique.map((delivery) => delivery.event.data.status)).toEqual(STATUSES);
    expect(unique.map((delivery) => delivery.event.data.sequence)).toEqual([0, 1, 2, 3, 4]);
    expect(unique.map((delivery) => delivery.event.data.previousStatus)).toEqual([
      undefined,
      ...STATUSES.slice(0, 4),
    ]);
    // A body changed in transit fails verification.
    const first = received[0];
    expect(() =>
      verifier.verify(
        first?.rawBody.replace('"sequence":0', '"sequence":9') ?? '',
        first?.headers as Record<string, string>,
      ),
    ).toThrow();

    const listed = await listedEvents(
      `?paymentId.eq=${paymentId}`,
      (events) => events.length >= unique.length,
    );
    expect(listed.body.map((event: unknown) => JSON.stringify(event))).toEqual(
      unique.map((delivery) => delivery.rawBody),
    );
    expect((await remove(endpoint.id)).status).toBe(204);
  }, 120_000);

  it('retries a failing receiver with the same webhook-id until it answers 2xx, and lists the attempts', async () => {
    const endpoint = await register('/flaky');
    receiver.answer('/flaky', (_received, seenBefore) => (seenBefore < 2 ? 503 : 200));
    const paymentId = await initiate();
    await allChangesOf('/flaky', paymentId);
    const first = await eventually(() => {
      const received = receiver.about('/flaky', paymentId).filter((entry) => entry.event.data.sequence === 0);
      return received.length >= 3 ? received : undefined;
    }, 'the third attempt of the first event');
    expect(new Set(first.map((entry) => entry.headers['webhook-id']))).toEqual(new Set([first[0]?.event.id]));
    // Each attempt is signed anew: a fresh timestamp, the same id.
    for (const entry of first)
      new Webhook(endpoint.secret).verify(entry.rawBody, entry.headers as Record<string, string>);

    const attempts = await eventually(async () => {
      const reply = await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}/deliveries?limit=100`, {
        token: service.token,
      });
      const forFirst = (reply.body as { eventId: string; outcome: string }[]).filter(
        (attempt) => attempt.eventId === first[0]?.event.id,
      );
      return forFirst.some((attempt) => attempt.outcome === 'delivered') ? forFirst : undefined;
    }, 'the delivered attempt in the list');
    expect(attempts.map((attempt) => attempt)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ attempt: 1, httpStatus: 503, outcome: 'failed' }),
        expect.objectContaining({ attempt: 2, httpStatus: 503, outcome: 'failed' }),
        expect.objectContaining({ attempt: 3, httpStatus: 200, outcome: 'delivered' }),
      ]),
    );
    expect((await remove(endpoint.id)).status).toBe(204);
  });

  it('signs with both secrets for a day after a rotation, each verifiable on its own', async () => {
    const endpoint = await register('/rotated');
    const rotation = await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}/secret-rotation`, {
      token: service.token,
      method: 'POST',
    });
    expect(rotation.status).toBe(200);
    const newSecret = rotation.body.secret as string;
    expect(newSecret).not.toBe(endpoint.secret);
    const overlapHours = (Date.parse(rotation.body.previousSecretExpiresAt) - Date.now()) / 3600_000;
    expect(overlapHours).toBeGreaterThan(23.9);
    expect(overlapHours).toBeLessThanOrEqual(24);

    const paymentId = await initiate();
    const [delivery] = await allChangesOf('/rotated', paymentId);
    expect(String(delivery?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpoint.secret, newSecret]) {
      expect(
        new Webhook(secret).verify(delivery?.rawBody ?? '', delivery?.headers as Record<string, string>),
      ).toMatchObject({
        data: { paymentId },
      });
    }
    const shown = await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}`, { token: service.token });
    expect(shown.status).toBe(200);
    expect(shown.body.secret).toBeUndefined();
    // A rotation takes no options.
    const withOptions = await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}/secret-rotation`, {
      token: service.token,
      body: { secret: 'mine' },
    });
    expect(withOptions.status).toBe(400);
    expect((await remove(endpoint.id)).status).toBe(204);
  });

  // These two side by side: each waits for its events to pass the settle horizon (EVENT_SETTLE_MS).
  it.concurrent('pages through every event delivered with the events API, oldest first', async () => {
    const endpoint = await register('/paged');
    const paymentIds = [await initiate(), await initiate(), await initiate()];
    const delivered = new Set<string>();
    for (const paymentId of paymentIds) {
      for (const entry of await allChangesOf('/paged', paymentId)) delivered.add(entry.event.id);
    }
    const since = new Date(Date.now() - 10 * 60_000).toISOString();
    const pageThrough = async () => {
      const listed: { id: string; createdAt: string }[] = [];
      let cursor = '';
      let pages = 0;
      do {
        const query = `createdAt.gte=${since}&limit=4${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
        const page = await callApi(service.baseUrl, `/v1/events?${query}`, { token: service.token });
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        expect(page.body.length).toBeLessThanOrEqual(4);
        // As a consumer reads it: a recent event may be shown again, and is dropped by id.
        const fresh = (page.body as { id: string }[]).filter(
          (event) => !listed.some((known) => known.id === event.id),
        );
        listed.push(...(fresh as { id: string; createdAt: string }[]));
        cursor = fresh.length === 0 ? '' : (page.headers.get('pagination-cursor') ?? '');
        pages++;
      } while (cursor !== '' && pages < 100);
      return { listed, pages };
    };
    // Once every event delivered has settled (EVENT_SETTLE_MS), the list holds them all.
    const { listed, pages } = await eventually(
      async () => {
        const read = await pageThrough();
        const ids = new Set(read.listed.map((event) => event.id));
        return [...delivered].every((id) => ids.has(id)) ? read : undefined;
      },
      'every delivered event listed',
      60_000,
    );
    const ids = listed.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of delivered) expect(ids).toContain(id);
    const times = listed.map((event) => event.createdAt);
    expect(times).toEqual([...times].sort());
    expect(pages).toBeGreaterThan(3);

    // A cursor belongs to its filters, and is refused with others.
    const first = await callApi(service.baseUrl, '/v1/events?limit=1', { token: service.token });
    const mismatched = await callApi(
      service.baseUrl,
      `/v1/events?type=webhook-endpoint.disabled&cursor=${encodeURIComponent(first.headers.get('pagination-cursor') ?? '')}`,
      { token: service.token },
    );
    expect(mismatched.status).toBe(400);
    expect(mismatched.body.invalidParams[0].name).toBe('cursor');
    const unknown = await callApi(service.baseUrl, '/v1/events?status=Rejected', { token: service.token });
    expect(unknown.status).toBe(400);
    expect((await remove(endpoint.id)).status).toBe(204);
  }, 120_000);

  it.concurrent('lists an event at once, and a cursor from that page still returns events that land within the horizon', async () => {
    const paymentId = await initiate();
    const query = `paymentId.eq=${paymentId}`;
    // The first status change, listed while it is still younger than the settle horizon.
    const first = await eventually(async () => {
      const reply = await callApi(service.baseUrl, `/v1/events?${query}`, { token: service.token });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return reply.body.length > 0 ? reply : undefined;
    }, 'the first event of the transfer listed');
    const answeredAt = Date.parse(first.headers.get('date') ?? '');
    const shown = first.body as { id: string; createdAt: string; data: { status: string } }[];
    expect(shown[0]?.data.status).toBe('Received');
    expect(Date.parse(shown[0]?.createdAt ?? '')).toBeGreaterThan(answeredAt - EVENT_SETTLE_MS + 1_000);
    const cursor = first.headers.get('pagination-cursor') ?? '';
    expect(cursor).not.toBe('');

    // Later, when every change of the transfer has landed and settled, the same cursor reaches
    // them all: it never moved past an event recorded after the first page was read.
    await eventually(
      async () => {
        const reply = await callApi(service.baseUrl, `/v1/events?${query}`, { token: service.token });
        const statuses = (reply.body as { data: { status: string } }[]).map((event) => event.data.status);
        return statuses.includes('AcceptedSettlementCompleted') &&
          reply.headers.get('pagination-cursor') === ''
          ? reply
          : undefined;
      },
      'every change of the transfer settled',
      60_000,
    );
    const later = await callApi(service.baseUrl, `/v1/events?${query}&cursor=${encodeURIComponent(cursor)}`, {
      token: service.token,
    });
    expect(later.status).toBe(200);
    // Every change, the ones the first page showed again among them (consumers drop them by id).
    expect((later.body as { data: { status: string } }[]).map((event) => event.data.status)).toEqual(
      STATUSES,
    );
  }, 120_000);

  it('keeps tenants apart: another tenant neither receives the events nor sees the endpoint', async () => {
    await createClient(service, {
      clientId: 'webhooks-other-tenant',
      clientSecret: 'webhooks-other-tenant-secret-0123',
      scope: 'transactions:read transactions:write webhooks:manage',
      tenant: 'other-tenant',
    });
    const other = await requestToken(service.baseUrl, undefined, {
      clientId: 'webhooks-other-tenant',
      clientSecret: 'webhooks-other-tenant-secret-0123',
    });
    const mine = await register('/mine');
    const theirs = await register('/theirs', {}, other);

    const myPayment = await initiate();
    const theirPayment = await initiate(other);
    await allChangesOf('/mine', myPayment);
    await allChangesOf('/theirs', theirPayment);
    expect(receiver.about('/theirs', myPayment)).toEqual([]);
    expect(receiver.about('/mine', theirPayment)).toEqual([]);

    for (const [method, path] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/secret-rotation'],
      ['GET', '/deliveries'],
    ] as const) {
      const reply = await callApi(service.baseUrl, `${ENDPOINTS}/${mine.id}${path}`, {
        token: other,
        method,
      });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body.error).toBe('not_found');
    }
    const redelivery = await callApi(service.baseUrl, `${ENDPOINTS}/${mine.id}/redeliveries`, {
      token: other,
      body: { since: new Date(0).toISOString() },
    });
    expect(redelivery.status).toBe(404);
    const theirList = await callApi(service.baseUrl, ENDPOINTS, { token: other });
    expect(theirList.body.map((endpoint: { id: string }) => endpoint.id)).toEqual([theirs.id]);
    // Read once both transfers' events have settled, so the lists are not empty merely for being early.
    await listedEvents(`?paymentId.eq=${myPayment}`, (events) => events.length >= STATUSES.length);
    const theirEvents = await listedEvents(
      '?limit=100',
      (events) => events.some((event) => event.data.paymentId === theirPayment),
      other,
    );
    expect(
      theirEvents.body.every(
        (event: { data: { paymentId?: string } }) => event.data.paymentId === theirPayment,
      ),
    ).toBe(true);
    const mineSeenByThem = await callApi(service.baseUrl, `/v1/events?paymentId.eq=${myPayment}`, {
      token: other,
    });
    expect(mineSeenByThem.body).toEqual([]);
    expect((await remove(mine.id)).status).toBe(204);
    expect((await remove(theirs.id, other)).status).toBe(204);
  }, 120_000);

  it('refuses URLs that are not https to a public host, with the error body', async () => {
    for (const url of [
      'http://hooks.example.com/h',
      'https://user:pass@hooks.example.com/h',
      'https://10.0.0.1/h',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/h',
      'https://[::1]/h',
      'https://[::ffff:127.0.0.1]/h',
      'https://[fd00::1]/h',
      'https://localhost/h',
      'http://127.0.0.2:8080/h',
    ]) {
      const reply = await callApi(service.baseUrl, ENDPOINTS, { token: service.token, body: { url } });
      expect(reply.status, url).toBe(400);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
      expect(reply.body.error).toBe('invalid_request');
      expect(reply.body.invalidParams[0].name).toBe('url');
    }
    const unknownField = await callApi(service.baseUrl, ENDPOINTS, {
      token: service.token,
      body: { url: receiver.url('/x'), secret: 'x' },
    });
    expect(unknownField.status).toBe(400);
    const list = await callApi(service.baseUrl, ENDPOINTS, { token: service.token });
    expect(list.body.some((endpoint: { url: string }) => endpoint.url.includes('example.com'))).toBe(false);
  });

  it('disables an endpoint that answers 410 Gone at once, and says so with an event', async () => {
    const gone = await register('/gone');
    const watcher = await register('/watcher', { eventTypes: ['webhook-endpoint.disabled'] });
    receiver.answer('/gone', () => 410);
    await initiate();
    const notice = await eventually(
      () => receiver.at('/watcher').find((entry) => entry.event.data.endpointId === gone.id),
      'the endpoint-disabled event',
    );
    expect(notice.event).toMatchObject({
      type: 'webhook-endpoint.disabled',
      data: { reason: 'gone', url: gone.url },
    });
    new Webhook(watcher.secret).verify(notice.rawBody, notice.headers as Record<string, string>);
    const shown = await callApi(service.baseUrl, `${ENDPOINTS}/${gone.id}`, { token: service.token });
    expect(shown.body).toMatchObject({ status: 'disabled', disabledReason: 'gone' });
    const goneCalls = receiver.at('/gone').length;
    await initiate();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(receiver.at('/gone').length).toBe(goneCalls);
    expect(receiver.at('/watcher').every((entry) => entry.event.type === 'webhook-endpoint.disabled')).toBe(
      true,
    );
    await listedEvents('?type=webhook-endpoint.disabled', (events) =>
      events.some((event) => event.id === notice.event.id),
    );
    const redelivery = await callApi(service.baseUrl, `${ENDPOINTS}/${gone.id}/redeliveries`, {
      token: service.token,
      body: { eventId: notice.event.id },
    });
    expect(redelivery.status).toBe(409);
    expect(redelivery.body.error).toBe('webhook_endpoint_disabled');
    await remove(gone.id);
    await remove(watcher.id);
  }, 120_000);

  it('queues events again on request, one by id or all since a time, with their own ids', async () => {
    const endpoint = await register('/replay');
    const paymentId = await initiate();
    const first = await allChangesOf('/replay', paymentId);
    const eventId = first[0]?.event.id as string;
    const again = await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}/redeliveries`, {
      token: service.token,
      body: { eventId },
    });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ queued: 1 });
    await eventually(
      () =>
        receiver.at('/replay').filter((entry) => entry.headers['webhook-id'] === eventId).length >= 2
          ? true
          : undefined,
      'the redelivered event',
    );
    const since = await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}/redeliveries`, {
      token: service.token,
      body: { since: first[0]?.event.createdAt },
    });
    expect(since.status).toBe(202);
    expect(since.body.queued).toBeGreaterThanOrEqual(5);
    const unknown = await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}/redeliveries`, {
      token: service.token,
      body: { eventId: '00000000-0000-8000-8000-000000000000' },
    });
    expect(unknown.status).toBe(404);
    const both = await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}/redeliveries`, {
      token: service.token,
      body: { eventId, since: first[0]?.event.createdAt },
    });
    expect(both.status).toBe(400);
    expect((await remove(endpoint.id)).status).toBe(204);
    expect(
      (await callApi(service.baseUrl, `${ENDPOINTS}/${endpoint.id}`, { token: service.token })).status,
    ).toBe(404);
  });

  it('lists endpoints a page at a time, and asks for the webhooks:manage scope', async () => {
    const created = [await register('/l1'), await register('/l2'), await register('/l3')];
    const seen: string[] = [];
    let cursor = '';
    do {
      const page = await callApi(
        service.baseUrl,
        `${ENDPOINTS}?limit=2${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        { token: service.token },
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.map((endpoint: { id: string }) => endpoint.id));
      cursor = page.headers.get('pagination-cursor') ?? '';
    } while (cursor !== '');
    expect(seen).toEqual(expect.arrayContaining(created.map((endpoint) => endpoint.id)));
    const readOnly = await requestToken(service.baseUrl, 'transactions:read');
    expect((await callApi(service.baseUrl, ENDPOINTS, { token: readOnly })).status).toBe(403);
    expect((await callApi(service.baseUrl, '/v1/events', { token: readOnly })).status).toBe(200);
    for (const endpoint of created) await remove(endpoint.id);
  });
});
