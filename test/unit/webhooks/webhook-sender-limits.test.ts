import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpWebhookSender, MAX_ANSWER_BYTES } from '#adapters/webhooks/webhook-sender';
import { countOpenSockets } from '../../support/open-sockets.ts';

/**
 * The sender's bounds, each at its edge: how much of an answer it reads (4 KiB, not a byte more
 * waited for), and its socket places, counted exactly however often one is handed to a waiter.
 */
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const receiver = async (answer: (request: IncomingMessage, response: ServerResponse) => void) => {
  const server = createServer(answer);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, server };
};

const request = (port: number) => ({
  url: `http://127.0.0.1:${port}/h`,
  headers: { 'content-type': 'application/json' },
  body: '{"a":1}',
  allowLoopback: true,
});

const eventuallyTrue = async (done: () => boolean) => {
  const until = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > until) throw new Error('not done within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

/** A receiver that sends this many body bytes, then neither more nor the end of the answer. */
const stallingAfter = (bytes: number) =>
  receiver((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write(Buffer.alloc(bytes, 'x'));
  });

describe('the webhook sender reads at most 4 KiB of an answer', () => {
  it('is 4 KiB, as documented', () => {
    expect(MAX_ANSWER_BYTES).toBe(4096);
  });

  it('takes the answer once it has read 4 KiB of the body, without waiting for the rest', async () => {
    const { port } = await stallingAfter(4096);
    // The time bound is far off: only the byte cap can end this exchange with the status.
    const answer = await new HttpWebhookSender({ timeoutMs: 5000 }).send(request(port));
    expect(answer).toMatchObject({ httpStatus: 200 });
    expect(answer.error).toBeUndefined();
  });

  it('waits for the body while it has read less than 4 KiB, until the time bound', async () => {
    const { port } = await stallingAfter(4095);
    const answer = await new HttpWebhookSender({ timeoutMs: 300 }).send(request(port));
    expect(answer.error).toBe('answer body not complete within 0.3 s (status 200)');
  });
});

describe("the webhook sender's socket places", () => {
  it.each([
    { sockets: 1, socketsPerOrigin: 3 },
    { sockets: 3, socketsPerOrigin: 1 },
  ])(
    'are counted exactly when handed from one delivery to the next, and all given back at the end (%o)',
    async (limits) => {
      const { port, server } = await receiver((_request, response) => {
        // Each answer held back a little, so the later deliveries wait for a place.
        setTimeout(() => response.writeHead(204).end(), 50);
      });
      const figures = countOpenSockets(server, { open: 0, most: 0 });
      const sender = new HttpWebhookSender({ timeoutMs: 10_000, limits });
      const first = await Promise.all(Array.from({ length: 3 }, () => sender.send(request(port))));
      expect(first.map((answer) => answer.httpStatus)).toEqual([204, 204, 204]);
      expect(figures.most).toBe(1);
      await eventuallyTrue(() => figures.open === 0 && sender.openSockets <= 0);
      expect(sender.openSockets).toBe(0);

      // The cap holds as before for the next deliveries: no place was counted twice.
      const second = await Promise.all(Array.from({ length: 3 }, () => sender.send(request(port))));
      expect(second.map((answer) => answer.httpStatus)).toEqual([204, 204, 204]);
      expect(figures.most).toBe(1);
      await eventuallyTrue(() => figures.open === 0 && sender.openSockets <= 0);
      expect(sender.openSockets).toBe(0);
    },
  );
});

describe("the webhook sender's reading of a status line", () => {
  const tcpServers: TcpServer[] = [];
  afterEach(async () => {
    for (const server of tcpServers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  /** A receiver that answers with this status line, whatever Node's own server would allow. */
  const answering = async (status: string) => {
    const server = createTcpServer((socket) =>
      socket.once('data', () => socket.end(`HTTP/1.1 ${status} Odd\r\ncontent-length: 0\r\n\r\n`)),
    );
    tcpServers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };

  it('takes a status from 100 to 599 as the answer, and fails any other with the status', async () => {
    const sender = new HttpWebhookSender({ timeoutMs: 5000 });
    expect(await sender.send(request(await answering('599')))).toMatchObject({ httpStatus: 599 });
    for (const status of ['600', '099']) {
      const answer = await sender.send(request(await answering(status)));
      expect(answer.httpStatus).toBeUndefined();
      expect(answer.error).toBe(`answered with status ${Number(status)}`);
    }
  });
});
