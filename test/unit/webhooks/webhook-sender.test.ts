import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpWebhookSender } from '#adapters/webhooks/webhook-sender';
import { countOpenSockets } from '../../support/open-sockets.ts';

/** Receivers on loopback only; host names are resolved by an injected lookup, never by DNS. */
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const receiver = async (answer: (request: IncomingMessage, response: ServerResponse) => void) => {
  const requests: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    requests.push(request);
    answer(request, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, requests };
};

type LookupCallback = (error: Error | null, addresses: { address: string; family: number }[]) => void;
/** A lookup that answers every name with these addresses. */
const lookupTo =
  (...addresses: string[]) =>
  (_hostname: string, _options: unknown, callback: LookupCallback) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );

const request = (url: string, allowLoopback = false) => ({
  url,
  headers: { 'content-type': 'application/json', 'webhook-id': 'evt' },
  body: '{"a":1}',
  allowLoopback,
});

describe('webhook sender', () => {
  it('connects to a name through the checked lookup when the address is allowed', async () => {
    const { port, requests } = await receiver((_request, response) => response.writeHead(204).end());
    const sender = new HttpWebhookSender({ lookup: lookupTo('127.0.0.1') as never });
    const answer = await sender.send(request(`http://receiver.test:${port}/h`, true));
    expect(answer.httpStatus).toBe(204);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers['webhook-id']).toBe('evt');
  });

  it('refuses a name that now resolves to a loopback or private address (DNS rebinding), without connecting', async () => {
    const { port, requests } = await receiver((_request, response) => response.writeHead(200).end());
    for (const addresses of [
      ['127.0.0.1'],
      ['10.0.0.8'],
      ['93.184.216.34', '127.0.0.1'],
      ['::ffff:127.0.0.1'],
    ]) {
      const sender = new HttpWebhookSender({ lookup: lookupTo(...addresses) as never });
      const answer = await sender.send(request(`http://rebound.test:${port}/h`));
      expect(answer.httpStatus).toBeUndefined();
      expect(answer.error).toMatch(/^address not public/);
    }
    expect(requests).toHaveLength(0);
  });

  it('refuses an address written in the URL that is not public, without connecting', async () => {
    const { port, requests } = await receiver((_request, response) => response.writeHead(200).end());
    const answer = await new HttpWebhookSender().send(request(`http://127.0.0.1:${port}/h`));
    expect(answer.error).toBe('address not public: 127.0.0.1');
    expect(requests).toHaveLength(0);
  });

  it('does not follow a redirect: the 3xx is the answer', async () => {
    const { port, requests } = await receiver((_request, response) =>
      response.writeHead(302, { Location: `http://127.0.0.1:${port}/elsewhere` }).end(),
    );
    const answer = await new HttpWebhookSender().send(request(`http://127.0.0.1:${port}/h`, true));
    expect(answer.httpStatus).toBe(302);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(requests.map((incoming) => incoming.url)).toEqual(['/h']);
  });

  it('gives up on an endpoint that does not answer in time, and reports a refused connection', async () => {
    const { port } = await receiver(() => undefined);
    const slow = await new HttpWebhookSender({ timeoutMs: 200 }).send(
      request(`http://127.0.0.1:${port}/h`, true),
    );
    expect(slow.error).toBe('no answer within 0.2 s');
    expect(slow.durationMs).toBeGreaterThanOrEqual(150);

    const closed = await receiver(() => undefined);
    servers.pop()?.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await new HttpWebhookSender().send(request(`http://127.0.0.1:${closed.port}/h`, true));
    expect(refused.error).toBe('connection refused');
  });
});

describe('webhook sender bounds', () => {
  /** Counts the connections a receiver holds open now, and the most it held at once. */
  const counting = (server: Server) => countOpenSockets(server, { open: 0, most: 0 });

  it('reads a few KB of an endless answer, closes the connection and counts the status', async () => {
    let written = 0;
    const { port } = await receiver((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) written += chunk.length;
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    const figures = counting(servers.at(-1) as Server);
    const answer = await new HttpWebhookSender({ timeoutMs: 5000 }).send(
      request(`http://127.0.0.1:${port}/endless`, true),
    );
    expect(answer).toMatchObject({ httpStatus: 200 });
    expect(answer.error).toBeUndefined();
    await eventuallyTrue(() => figures.open === 0);
    // The receiver could write only what fits in the socket buffers before the close.
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('fails an answer whose body trickles past the time bound, with the reason, and closes it', async () => {
    const { port } = await receiver((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => (response.destroyed ? clearInterval(drip) : response.write('x')), 50);
    });
    const figures = counting(servers.at(-1) as Server);
    const answer = await new HttpWebhookSender({ timeoutMs: 300 }).send(
      request(`http://127.0.0.1:${port}/trickle`, true),
    );
    expect(answer.error).toBe('answer body not complete within 0.3 s (status 200)');
    await eventuallyTrue(() => figures.open === 0);
  });

  it('holds at most the cap of sockets to one origin and in total, whatever the receivers do', async () => {
    const { port } = await receiver((_request, response) => {
      response.writeHead(200);
      const drip = setInterval(() => (response.destroyed ? clearInterval(drip) : response.write('x')), 20);
    });
    const figures = counting(servers.at(-1) as Server);
    const sender = new HttpWebhookSender({ timeoutMs: 200, limits: { sockets: 6, socketsPerOrigin: 3 } });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => sender.send(request(`http://127.0.0.1:${port}/trickle`, true))),
    );
    // Every one fails on its time bound (the body, or on a busy machine the status line first).
    expect(answers.every((answer) => answer.error !== undefined)).toBe(true);
    expect(figures.most).toBeLessThanOrEqual(3);
    await eventuallyTrue(() => sender.openSockets === 0);
  });
});

describe('webhook sender fairness', () => {
  it("lets another tenant's attempt to the same origin through before one tenant's queue of waiting attempts", async () => {
    const order: string[] = [];
    const { port } = await receiver((request, response) => {
      order.push(request.url ?? '');
      // The first tenant's answers trickle for a while; the other's come at once.
      if (request.url?.startsWith('/slow')) setTimeout(() => response.writeHead(204).end(), 100);
      else response.writeHead(204).end();
    });
    const sender = new HttpWebhookSender({ timeoutMs: 5_000, limits: { sockets: 64, socketsPerOrigin: 2 } });
    const slow = Array.from({ length: 8 }, (_, index) =>
      sender.send({ ...request(`http://127.0.0.1:${port}/slow/${index}`, true), tenant: 'flooding' }),
    );
    const quick = sender.send({ ...request(`http://127.0.0.1:${port}/quick`, true), tenant: 'quiet' });
    await Promise.all([...slow, quick]);
    // Two places, taken by the flooding tenant; of the places that come free, the quiet tenant has
    // the first or the second (one turn each), not the seventh.
    expect(order.indexOf('/quick')).toBeLessThanOrEqual(3);
    expect(order).toHaveLength(9);
  });
});

const eventuallyTrue = async (done: () => boolean) => {
  const until = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > until) throw new Error('not done within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
