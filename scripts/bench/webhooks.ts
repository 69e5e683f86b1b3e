import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { type BenchClient, fixed, runConcurrently } from './support.ts';

/**
 * Webhook delivery on the local runtime: a receiver on 127.0.0.1 registered as `endpoints`
 * endpoints of one client, `transfers` transfers initiated; every status change goes to every
 * endpoint. Latency is from the status change (the event's `data.date`) to its receipt, per
 * delivery; throughput is deliveries over the time from the first status change to the last
 * receipt. Traffic stays on loopback and the run is bounded by `timeoutMs`. The endpoints stay
 * registered: each run takes a fresh service.
 */
export interface WebhookBenchFigures {
  endpoints: number;
  transfers: number;
  deliveries: number;
  /** Receipts of a delivery already received (at least once: a retry after a slow answer). */
  repeats: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const FINAL = 'AcceptedSettlementCompleted';

const percentile = (sorted: number[], fraction: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;

export const benchWebhookDelivery = async (
  api: BenchClient,
  options: { endpoints: number; transfers: number; concurrency: number; timeoutMs: number; label: string },
): Promise<WebhookBenchFigures> => {
  const received = new Map<string, number>();
  const latencies: number[] = [];
  const finalsAt = new Map<string, number>();
  let firstChange = Number.POSITIVE_INFINITY;
  let lastReceipt = 0;
  let repeats = 0;
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const now = Date.now();
      response.writeHead(204).end();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: string;
        data: { paymentId: string; status: string; date: string };
      };
      const key = `${request.url}/${event.id}`;
      if (received.has(key)) {
        repeats++;
        return;
      }
      received.set(key, now);
      const changedAt = Date.parse(event.data.date);
      latencies.push(now - changedAt);
      firstChange = Math.min(firstChange, changedAt);
      lastReceipt = Math.max(lastReceipt, now);
      if (event.data.status === FINAL)
        finalsAt.set(event.data.paymentId, (finalsAt.get(event.data.paymentId) ?? 0) + 1);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  try {
    for (let index = 0; index < options.endpoints; index++) {
      const reply = await api.post('/v1/webhook-endpoints', {
        url: `http://127.0.0.1:${port}/${options.label}/${index}`,
        eventTypes: ['credit-transfer.status-changed'],
      });
      if (reply.status !== 201) throw new Error(`registration answered ${reply.status}: ${reply.text}`);
    }
    const paymentIds: string[] = [];
    await runConcurrently(
      { requests: options.transfers, concurrency: options.concurrency },
      async (index) => {
        const reply = await api.post(
          '/v1/payments/credit-transfers',
          minimalCreditTransfer({
            debtorAccountId: `bench-hooks-${options.label}`,
            amount: `${index + 1}.00`,
          }),
        );
        if (reply.status !== 202) throw new Error(`initiation answered ${reply.status}: ${reply.text}`);
        paymentIds.push((JSON.parse(reply.text) as { paymentId: string }).paymentId);
      },
    );
    const deadline = performance.now() + options.timeoutMs;
    // Done when every endpoint has the final status of every transfer.
    while (paymentIds.some((id) => (finalsAt.get(id) ?? 0) < options.endpoints)) {
      if (performance.now() > deadline)
        throw new Error(
          `webhook bench: ${received.size} deliveries within ${options.timeoutMs} ms, fewer than every status change to every endpoint`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
  latencies.sort((a, b) => a - b);
  const seconds = (lastReceipt - firstChange) / 1000;
  return {
    endpoints: options.endpoints,
    transfers: options.transfers,
    deliveries: received.size,
    repeats,
    seconds,
    perSecond: received.size / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? 0,
  };
};

export const webhookBenchRow = (figures: WebhookBenchFigures): (string | number)[] => [
  figures.endpoints,
  figures.transfers,
  figures.deliveries,
  figures.repeats,
  fixed(figures.p50Ms),
  fixed(figures.p99Ms),
  fixed(figures.maxMs),
  fixed(figures.perSecond),
];
