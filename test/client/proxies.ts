import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, createConnection, createServer as createTcpServer, type Socket } from 'node:net';

const listen = async (server: {
  listen: (port: number, host: string, done: () => void) => void;
  address: () => AddressInfo | string | null;
}) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/**
 * A TCP proxy that forwards the first connection's request to the service and then cuts that
 * connection as the answer starts to come back: the service did the work, the client never hears.
 */
export const startConnectionKillingProxy = async (target: string) => {
  const upstream = new URL(target);
  let connections = 0;
  let killed = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    connections++;
    const killThis = killed === 0;
    const service = createConnection({ host: upstream.hostname, port: Number(upstream.port) });
    sockets.add(client).add(service);
    client.on('data', (chunk) => service.write(chunk));
    service.on('data', (chunk) => {
      if (killThis) {
        killed++;
        client.destroy();
        service.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on('error', () => service.destroy());
    service.on('error', () => client.destroy());
    client.on('close', () => service.destroy());
    service.on('close', () => client.end());
  });
  const url = await listen(server);
  return {
    url,
    connections: () => connections,
    killed: () => killed,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

const readBody = async (request: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export interface ProxiedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
}

/**
 * An HTTP proxy to the service that can rewrite an answer (`transform`) or hold a request
 * forever (`stall` returns true), and records every request it saw.
 */
export const startHttpProxy = async (
  target: string,
  hooks: {
    stall?: (request: ProxiedRequest) => boolean;
    transform?: (request: ProxiedRequest, body: string) => string;
  } = {},
) => {
  const seen: ProxiedRequest[] = [];
  const stalled = new Set<() => void>();
  const server = createHttpServer(async (request, response) => {
    const proxied = {
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      authorization: request.headers.authorization,
    };
    seen.push(proxied);
    const body = await readBody(request);
    if (hooks.stall?.(proxied)) {
      await new Promise<void>((resolve) => stalled.add(resolve));
      response.destroy();
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers))
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
        headers.set(name, value);
    const answer = await fetch(`${target}${proxied.path}`, {
      method: proxied.method,
      headers,
      ...(body.length > 0 && { body }),
    });
    let text = await answer.text();
    if (hooks.transform) text = hooks.transform(proxied, text);
    const outHeaders: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name))
        outHeaders[name] = value;
    });
    response.writeHead(answer.status, outHeaders).end(text);
  });
  const url = await listen(server);
  return {
    url,
    seen,
    close: async () => {
      for (const release of stalled) release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};
