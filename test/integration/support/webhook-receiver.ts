import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got: the raw body as it arrived, before any JSON parser. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** When it arrived (ms since the epoch). */
  at: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read events field by field
  event: any;
}

export type Answer = (received: ReceivedWebhook, seenBefore: number) => number | 'hold';

/**
 * A real HTTP server on 127.0.0.1 that receives webhooks: each path answers as the test sets
 * (200 by default), `hold` keeps the request open without an answer.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly answers = new Map<string, Answer>();
  private readonly held: (() => void)[] = [];
  private server: Server | undefined;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        let event: unknown;
        try {
          event = JSON.parse(rawBody);
        } catch {
          event = undefined;
        }
        const received = {
          path: request.url ?? '',
          headers: request.headers,
          rawBody,
          at: Date.now(),
          event,
        };
        const seenBefore = this.received.filter(
          (earlier) =>
            earlier.path === received.path && earlier.headers['webhook-id'] === request.headers['webhook-id'],
        ).length;
        this.received.push(received);
        const status = (this.answers.get(received.path) ?? (() => 200))(received, seenBefore);
        if (status === 'hold') {
          this.held.push(() => response.destroy());
          return;
        }
        response.writeHead(status, { 'Content-Type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  answer(path: string, answer: Answer): void {
    this.answers.set(path, answer);
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((received) => received.path === path);
  }

  /** Everything received at `path` about this transfer. */
  about(path: string, paymentId: string): ReceivedWebhook[] {
    return this.at(path).filter((received) => received.event?.data?.paymentId === paymentId);
  }

  async stop(): Promise<void> {
    for (const drop of this.held.splice(0)) drop();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export const eventually = async <T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
