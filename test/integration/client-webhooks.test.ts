import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  CreditTransfersClient as Client,
  type CreditTransfersClient,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '../../client/src/index.ts';
import { cliEnv, runCli, startCli } from '../client/cli-process.ts';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { LOCAL_CLIENT } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually, type ReceivedWebhook, WebhookReceiver } from './support/webhook-receiver.ts';

/**
 * The SDK's and the CLI's webhook and events calls against the local runtime, with a real
 * receiver (an HTTP server on 127.0.0.1): what the service delivers verifies with
 * verifyWebhook, and what `cli listen` forwards verifies with the Standard Webhooks library.
 */

const service = useLocalService();
let receiver: WebhookReceiver;
let client: CreditTransfersClient;
let env: Record<string, string>;

/** Recent events are listed at once; a transfer settles within seconds locally. */
const SETTLED_MS = 60_000;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  client = new Client({ baseUrl: service.baseUrl, ...LOCAL_CLIENT });
  env = cliEnv(service.baseUrl, LOCAL_CLIENT);
});

afterAll(async () => {
  await receiver?.stop();
});

const initiate = async (debtorAccountId = 'hooks-sdk-1') =>
  (await client.initiate(minimalCreditTransfer({ debtorAccountId }))).paymentId;

const settledDelivery = (path: string, paymentId: string, timeoutMs = 30_000): Promise<ReceivedWebhook> =>
  eventually(
    () =>
      receiver
        .about(path, paymentId)
        .find((entry) => entry.event.data.status === 'AcceptedSettlementCompleted'),
    `the settled status of ${paymentId} at ${path}`,
    timeoutMs,
  );

describe('verifyWebhook', () => {
  it('verifies a real delivery into a typed event, and refuses a tampered, a stale or a foreign one', async () => {
    const endpoint = await client.webhooks.create({ url: receiver.url('/verify'), description: 'sdk' });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const paymentId = await initiate();
    const delivery = await settledDelivery('/verify', paymentId);

    const event: WebhookEvent = verifyWebhook(delivery.rawBody, delivery.headers, endpoint.secret);
    expect(event.type).toBe('credit-transfer.status-changed');
    if (event.type !== 'credit-transfer.status-changed') throw new Error('narrowed above');
    expect(event.data).toMatchObject({ paymentId, status: 'AcceptedSettlementCompleted' });
    expect(event.id).toBe(delivery.headers['webhook-id']);
    // A Buffer body and fetch-style Headers verify too.
    const asFetch = new Headers(delivery.headers as Record<string, string>);
    expect(verifyWebhook(Buffer.from(delivery.rawBody), asFetch, [endpoint.secret]).id).toBe(event.id);

    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError);
        return (error as WebhookVerificationError).reason;
      }
      return 'verified';
    };
    const tampered = delivery.rawBody.replace('AcceptedSettlementCompleted', 'Rejected');
    expect(refusal(() => verifyWebhook(tampered, delivery.headers, endpoint.secret))).toBe(
      'no_matching_signature',
    );
    const other = `whsec_${Buffer.from('another secret of 24 byte').toString('base64')}`;
    expect(refusal(() => verifyWebhook(delivery.rawBody, delivery.headers, other))).toBe(
      'no_matching_signature',
    );
    const { 'webhook-signature': _, ...unsigned } = delivery.headers;
    expect(refusal(() => verifyWebhook(delivery.rawBody, unsigned, endpoint.secret))).toBe('missing_headers');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 6 * 60_000);
      expect(refusal(() => verifyWebhook(delivery.rawBody, delivery.headers, endpoint.secret))).toBe(
        'timestamp_too_old',
      );
    } finally {
      vi.useRealTimers();
    }

    // After a rotation a delivery verifies with the new secret, and with the old one.
    const rotated = await client.webhooks.rotateSecret(endpoint.id);
    const later = await initiate('hooks-sdk-2');
    const signedTwice = await settledDelivery('/verify', later);
    expect(verifyWebhook(signedTwice.rawBody, signedTwice.headers, rotated.secret).id).toBe(
      signedTwice.headers['webhook-id'],
    );
    expect(verifyWebhook(signedTwice.rawBody, signedTwice.headers, [other, endpoint.secret]).id).toBeTruthy();
    await client.webhooks.delete(endpoint.id);
  });
});

describe('the SDK webhook endpoint and events calls', () => {
  it('creates, lists, reads, redelivers, shows deliveries and deletes an endpoint; lists and follows events', async () => {
    const created = [
      await client.webhooks.create({
        url: receiver.url('/calls'),
        eventTypes: ['credit-transfer.status-changed'],
      }),
      await client.webhooks.create({ url: receiver.url('/calls-2') }),
    ];
    const listed: string[] = [];
    for await (const endpoint of client.webhooks.list({ limit: 1 })) listed.push(endpoint.id);
    expect(listed).toEqual(expect.arrayContaining(created.map((endpoint) => endpoint.id)));
    const page = await client.webhooks.listPage({ limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.cursor).not.toBe('');
    const shown = await client.webhooks.get(created[0]?.id ?? '');
    expect(shown).toMatchObject({ url: receiver.url('/calls'), status: 'enabled' });
    expect(shown).not.toHaveProperty('secret');

    // Following from now: started before the transfer, it yields the transfer's events as they settle.
    const following = new AbortController();
    const followed: WebhookEvent[] = [];
    const follower = (async () => {
      for await (const event of client.events.follow({}, { intervalMs: 500, signal: following.signal }))
        followed.push(event);
    })().catch((error: unknown) => {
      if (!following.signal.aborted) throw error;
    });

    const paymentId = await initiate('hooks-sdk-3');
    const delivery = await settledDelivery('/calls', paymentId);
    const attempts = await client.webhooks.deliveries(created[0]?.id ?? '', { limit: 10 });
    expect(attempts.map((attempt) => attempt.eventId)).toContain(delivery.event.id);
    expect(attempts[0]).toMatchObject({ attempt: 1, outcome: 'delivered', httpStatus: 200 });
    expect(await client.webhooks.redeliver(created[0]?.id ?? '', { eventId: delivery.event.id })).toEqual({
      queued: 1,
    });
    await eventually(
      () =>
        receiver.at('/calls').filter((entry) => entry.event.id === delivery.event.id).length >= 2
          ? true
          : undefined,
      'the redelivery',
    );

    const events = await eventually(
      async () => {
        const all: WebhookEvent[] = [];
        for await (const event of client.events.list({ 'paymentId.eq': paymentId }, { limit: 2 }))
          all.push(event);
        return all.length >= 5 ? all : undefined;
      },
      'the events of the transfer listed',
      SETTLED_MS,
    );
    expect(
      events.map((event) => (event.type === 'credit-transfer.status-changed' ? event.data.sequence : -1)),
    ).toEqual([0, 1, 2, 3, 4]);
    await eventually(
      () =>
        followed.filter(
          (event) => event.type === 'credit-transfer.status-changed' && event.data.paymentId === paymentId,
        ).length >= 5
          ? true
          : undefined,
      'the followed events',
      SETTLED_MS,
    );
    following.abort();
    await follower;
    const followedIds = followed.map((event) => event.id);
    expect(new Set(followedIds).size).toBe(followedIds.length);
    expect(events.every((event) => followedIds.includes(event.id))).toBe(true);

    for (const endpoint of created) await client.webhooks.delete(endpoint.id);
    const gone = await client.webhooks.get(created[0]?.id ?? '').catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(ApiError);
    expect(gone).toMatchObject({ status: 404, error: 'not_found', method: 'GET' });
  }, 120_000);
});

describe('the CLI', () => {
  it('listen forwards a real status change to a local receiver, signed with the secret it prints; events --follow prints it', async () => {
    const listen = startCli(['listen', '--forward-to', receiver.url('/listen'), '--interval', '500ms'], env);
    const follow = startCli(['events', '--follow', '--interval', '500ms', '--format', 'json'], env);
    try {
      const secret = await eventually(
        () => /Webhook signing secret: (whsec_\S+)/.exec(listen.stderr())?.[1],
        'the secret listen prints',
      );
      const paymentId = await initiate('hooks-cli-1');
      const settled = await settledDelivery('/listen', paymentId, SETTLED_MS);
      const verified = new Webhook(secret).verify(
        settled.rawBody,
        settled.headers as Record<string, string>,
      ) as {
        id: string;
        data: { paymentId: string };
      };
      expect(verified.data.paymentId).toBe(paymentId);
      expect(verified.id).toBe(settled.headers['webhook-id']);
      expect(listen.stdout()).toMatch(/^createdAt\s+id\s+type\s+forwarded\s+durationMs/);
      // The line is printed once the receiver has answered: it may follow the delivery by a moment.
      await eventually(
        () => listen.stdout().includes(settled.event.id) || undefined,
        'the line listen prints',
      );

      const line = await eventually(
        () =>
          follow
            .stdout()
            .split('\n')
            .filter((text) => text !== '')
            .map((text) => JSON.parse(text) as WebhookEvent)
            .find(
              (event) =>
                event.type === 'credit-transfer.status-changed' && event.data.paymentId === paymentId,
            ),
        'the event events --follow prints',
        SETTLED_MS,
      );
      expect(line.createdAt).toMatch(/Z$/);
    } finally {
      listen.child.kill();
      follow.child.kill();
      await Promise.all([listen.done, follow.done]);
    }
  }, 120_000);

  it('creates, lists, rotates, shows deliveries and deletes endpoints, with header rows in tables and CSV', async () => {
    const create = await runCli(
      [
        'webhooks',
        'create',
        '--url',
        receiver.url('/cli'),
        '--description',
        'cli, quoted',
        '--format',
        'json',
      ],
      env,
    );
    expect(create.code, create.stderr).toBe(0);
    const endpoint = JSON.parse(create.stdout) as { id: string; secret: string };
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(create.stderr).toContain('shown this once');

    const table = await runCli(['webhooks', 'list', '--all'], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^id\s+url\s+status\s+eventTypes\s+description\s+createdAt$/);
    expect(table.stdout).toContain(endpoint.id);
    const csv = await runCli(['webhooks', 'list', '--all', '--format', 'csv'], env);
    expect(csv.stdout.split('\r\n')[0]).toBe(
      'id,url,status,eventTypes,description,createdAt,disabledAt,disabledReason',
    );
    expect(csv.stdout).toContain('"cli, quoted"');

    const rotated = await runCli(['webhooks', 'rotate-secret', endpoint.id, '--format', 'json'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout).secret).not.toBe(endpoint.secret);

    const paymentId = await initiate('hooks-cli-2');
    await settledDelivery('/cli', paymentId);
    const deliveries = await runCli(['webhooks', 'deliveries', endpoint.id, '--limit', '5'], env);
    expect(deliveries.code, deliveries.stderr).toBe(0);
    expect(deliveries.stdout.split('\n')[0]).toMatch(
      /^attemptedAt\s+eventId\s+attempt\s+outcome\s+httpStatus\s+error\s+durationMs$/,
    );
    expect(deliveries.stdout).toContain('delivered');

    const events = await runCli(['events', '--type', 'credit-transfer.status-changed', '--limit', '3'], env);
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout.split('\n')[0]).toMatch(/^createdAt\s+id\s+type\s+summary$/);

    const deleted = await runCli(['webhooks', 'delete', endpoint.id, '--format', 'json'], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ id: endpoint.id, deleted: true });
    const again = await runCli(['webhooks', 'delete', endpoint.id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `Refused (404) by the API (DELETE ${service.baseUrl}/v1/webhook-endpoints/${endpoint.id})`,
    );

    const unreachable = await runCli(['events'], {
      ...env,
      CREDIT_TRANSFERS_TOKEN_URL: 'http://127.0.0.1:1/oauth/token',
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(
      'The token endpoint (POST http://127.0.0.1:1/oauth/token) could not be reached',
    );
    const badForward = await runCli(['listen', '--forward-to', 'ftp://localhost/x'], env);
    expect(badForward.code).toBe(1);
    expect(badForward.stderr).toContain('--forward-to is not an http(s) URL');
  }, 120_000);
});
