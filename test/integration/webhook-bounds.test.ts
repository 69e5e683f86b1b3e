import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { countOpenSockets } from '../support/open-sockets.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually } from './support/webhook-receiver.ts';

/**
 * Hostile receivers against the running local service: one answers 200 with a body that never
 * ends, one trickles its body a byte at a time. The service holds at most the cap of sockets to
 * each, records why their attempts failed, and another tenant's status reads still answer.
 */
const ENDPOINTS = '/v1/webhook-endpoints';
/** The sender's cap of sockets to one origin (SENDER_LIMITS.socketsPerOrigin). */
const SOCKETS_PER_ORIGIN = 4;

const service = useLocalService({ env: { WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1' }, token: true });

interface HostileReceiver {
  url: string;
  server: Server;
  figures: { open: number; most: number; requests: number };
}

const hostile = async (answer: (response: ServerResponse) => void): Promise<HostileReceiver> => {
  const figures = { open: 0, most: 0, requests: 0 };
  const server = createServer((_request, response) => {
    figures.requests++;
    answer(response);
  });
  countOpenSockets(server, figures);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, server, figures };
};

let endless: HostileReceiver;
let trickling: HostileReceiver;

beforeAll(async () => {
  endless = await hostile((response) => {
    response.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pump = () => {
      while (!response.destroyed && response.write(chunk)) {}
      if (!response.destroyed) response.once('drain', pump);
    };
    pump();
  });
  trickling = await hostile((response) => {
    response.writeHead(200);
    const drip = setInterval(() => (response.destroyed ? clearInterval(drip) : response.write('x')), 1000);
  });
});

afterAll(async () => {
  for (const receiver of [endless, trickling]) {
    receiver?.server.closeAllConnections();
    await new Promise((resolve) => receiver?.server.close(resolve));
  }
});

describe('webhook delivery to hostile receivers', () => {
  it('holds at most the cap of sockets to each, records why, and another tenant is still answered', async () => {
    const ids: Record<string, string> = {};
    for (const [name, receiver] of Object.entries({ endless, trickling })) {
      const reply = await callApi(service.baseUrl, ENDPOINTS, {
        token: service.token,
        body: { url: receiver.url },
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      ids[name] = reply.body.id as string;
    }
    // Many events for both receivers: every status change of 10 transfers.
    for (let i = 0; i < 10; i++) {
      const reply = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
        token: service.token,
        body: minimalCreditTransfer(),
      });
      expect(reply.status).toBe(202);
    }
    const other = {
      clientId: 'bounds-other',
      clientSecret: 'bounds-other-secret-0123456789',
      scope: 'transactions:read transactions:write',
      tenant: 'bounds-other',
    };
    await createClient(service, other);
    const otherToken = await requestToken(service.baseUrl, other.scope, other);
    const own = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
      token: otherToken,
      body: minimalCreditTransfer(),
    });
    expect(own.status).toBe(202);

    // While both receivers hold on, the other tenant's status reads answer.
    await eventually(() => (trickling.figures.requests >= SOCKETS_PER_ORIGIN ? true : undefined), 'attempts');
    for (let read = 0; read < 10; read++) {
      const status = await callApi(
        service.baseUrl,
        `/v1/payments/credit-transfers/${own.body.paymentId}/status`,
        { token: otherToken },
      );
      expect(status.status).toBe(200);
    }

    const failedAttempt = await eventually(
      async () => {
        const reply = await callApi(service.baseUrl, `${ENDPOINTS}/${ids.trickling}/deliveries?limit=100`, {
          token: service.token,
        });
        return (reply.body as { error?: string }[]).find((attempt) =>
          attempt.error?.startsWith('answer body not complete within'),
        );
      },
      'a trickled attempt recorded with its reason',
      60_000,
    );
    expect(failedAttempt).toBeDefined();
    expect(endless.figures.requests).toBeGreaterThan(0);
    expect(endless.figures.most).toBeLessThanOrEqual(SOCKETS_PER_ORIGIN);
    expect(trickling.figures.most).toBeLessThanOrEqual(SOCKETS_PER_ORIGIN);
  }, 180_000);
});
