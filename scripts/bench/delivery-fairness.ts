import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { LocalService } from '#local/service-process';
import { minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { type BenchClient, benchClient } from './support.ts';

/**
 * Webhook delivery fairness between tenants, the two cases found by an attacker's test, smaller:
 * - first webhooks: tenant A floods initiations (with a webhook endpoint of its own) while tenant
 *   B initiates a transfer during the flood and a few after it; B's first webhook's delay, from
 *   the status change it reports to its receipt;
 * - retries: tenant A has ten endpoints that trickle their answer (each attempt lasts its whole
 *   10 s time limit) and thousands of queued deliveries; B's endpoint fails each event's first
 *   attempt, and its retry is due a second later (WEBHOOK_RETRY_SCHEDULE_SECONDS=1,...): how late
 *   the retry arrives after it was due.
 * A webhook not arrived within `waitMs` counts as `waitMs` and is reported as missing.
 */

const FLOOD = {
  clientId: 'fair-flood',
  clientSecret: 'fair-flood-client-secret-0123456789',
  tenant: 'fair-flood',
};

export interface Delays {
  /** Per probe (or retry), milliseconds; `waitMs` for those that never came. */
  ms: number[];
  missing: number;
}

export interface FirstWebhookFigures {
  duringFlood: Delays;
  afterFlood: Delays;
  floodInitiations: number;
  floodSeconds: number;
}

export interface RetryFigures {
  lateness: Delays;
  backlog: number;
  backlogSeconds: number;
}

interface Received {
  at: number;
  path: string;
  id: string;
  data: { paymentId?: string; status?: string; date?: string; sequence?: number };
}

/** A receiver on 127.0.0.1: `/trickle/...` answers a byte a second and never ends, `/fail-first/...` fails each event once. */
const startReceiver = async () => {
  const received: Received[] = [];
  const trickling = new Set<ServerResponse>();
  const seen = new Set<string>();
  const timer = setInterval(() => {
    for (const response of trickling) response.write('.');
  }, 1_000);
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      const id = String(request.headers['webhook-id']);
      if (path.startsWith('/trickle/')) {
        response.writeHead(200, { 'Content-Type': 'text/plain' });
        trickling.add(response);
        response.on('close', () => trickling.delete(response));
        return;
      }
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: Received['data'] };
      received.push({ at: Date.now(), path, id, data: event.data });
      const first = !seen.has(`${path} ${id}`);
      seen.add(`${path} ${id}`);
      response.writeHead(path.startsWith('/fail-first/') && first ? 500 : 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    received,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: async () => {
      clearInterval(timer);
      for (const response of trickling) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

const createFloodClient = (service: LocalService): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../client-create.ts', import.meta.url)),
        '--client-id',
        FLOOD.clientId,
        '--client-secret',
        FLOOD.clientSecret,
        '--scope',
        'transactions:read transactions:write webhooks:manage',
        '--tenant',
        FLOOD.tenant,
      ],
      { env: { ...process.env, DATA_DIR: service.dataDir }, stdio: 'inherit' },
    );
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`client-create exited ${code}`))));
  });

const floodClient = async (service: LocalService): Promise<BenchClient> => {
  await createFloodClient(service);
  const response = await fetch(`${service.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: FLOOD.clientId,
      client_secret: FLOOD.clientSecret,
    }),
  });
  if (response.status !== 200) throw new Error(`flood token: ${response.status}`);
  return benchClient(service.baseUrl, ((await response.json()) as { access_token: string }).access_token);
};

const register = async (client: BenchClient, url: string) => {
  const reply = await client.post('/v1/webhook-endpoints', { url });
  if (reply.status !== 201) throw new Error(`endpoint registration: ${reply.status} ${reply.text}`);
};

const initiate = async (client: BenchClient): Promise<string> => {
  const created = await client.post('/v1/payments/credit-transfers', minimalCreditTransfer());
  if (created.status !== 202) throw new Error(`initiation: ${created.status} ${created.text}`);
  return (JSON.parse(created.text) as { paymentId: string }).paymentId;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done` or `waitMs`; answers whether it was done. */
const waitFor = async (done: () => boolean, waitMs: number): Promise<boolean> => {
  const deadline = Date.now() + waitMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
};

const delaysOf = (values: (number | undefined)[], waitMs: number): Delays => ({
  ms: values.map((value) => value ?? waitMs),
  missing: values.filter((value) => value === undefined).length,
});

/** B's first webhooks during and after A's flood of initiations. */
export const benchFirstWebhookFairness = async (
  service: LocalService,
  probe: BenchClient,
  options: { floodSeconds: number; concurrency: number; afterProbes: number; waitMs: number },
): Promise<FirstWebhookFigures> => {
  const receiver = await startReceiver();
  try {
    await register(probe, receiver.url('/probe'));
    const flood = await floodClient(service);
    await register(flood, receiver.url('/flood'));

    /** The delay of the payment's first webhook: from the change it reports to its receipt. */
    const firstWebhookDelay = async (paymentId: string): Promise<number | undefined> => {
      const first = () =>
        receiver.received.find((entry) => entry.path === '/probe' && entry.data.paymentId === paymentId);
      if (!(await waitFor(() => first() !== undefined, options.waitMs))) return undefined;
      const entry = first() as Received;
      return entry.at - Date.parse(entry.data.date as string);
    };

    let flooding = true;
    let floodInitiations = 0;
    const started = Date.now();
    const flooders = Array.from({ length: options.concurrency }, async () => {
      while (flooding) {
        const reply = await flood.post('/v1/payments/credit-transfers', minimalCreditTransfer());
        if (reply.status === 202) floodInitiations += 1;
      }
    });
    await sleep((options.floodSeconds * 1000) / 2);
    const during = firstWebhookDelay(await initiate(probe));
    await sleep((options.floodSeconds * 1000) / 2);
    flooding = false;
    await Promise.all(flooders);
    const floodSeconds = (Date.now() - started) / 1000;
    // After the flood, while its backlog is recorded and delivered: one probe every 5 s.
    const after: Promise<number | undefined>[] = [];
    for (let index = 0; index < options.afterProbes; index++) {
      await sleep(5_000);
      after.push(firstWebhookDelay(await initiate(probe)));
    }
    return {
      duringFlood: delaysOf([await during], options.waitMs),
      afterFlood: delaysOf(await Promise.all(after), options.waitMs),
      floodInitiations,
      floodSeconds,
    };
  } finally {
    await receiver.close();
  }
};

/**
 * B's retries while A's trickling endpoints have a backlog of queued deliveries. The service runs
 * with WEBHOOK_RETRY_SCHEDULE_SECONDS=1,1,...: every retry is due a second after the failure.
 */
export const benchRetryFairness = async (
  service: LocalService,
  probe: BenchClient,
  options: { backlogTransfers: number; probes: number; waitMs: number },
): Promise<RetryFigures> => {
  const receiver = await startReceiver();
  try {
    const flood = await floodClient(service);
    for (let index = 0; index < 10; index++) await register(flood, receiver.url(`/trickle/${index}`));
    await register(probe, receiver.url('/fail-first/probe'));

    // Five status events per transfer, to ten endpoints each: the first deliveries find no place
    // (the endpoints trickle) and are queued.
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < options.backlogTransfers) {
          next++;
          await initiate(flood);
        }
      }),
    );
    // The transfers settle and their first deliveries are queued (each waits 2 s for a place).
    const backlog = options.backlogTransfers * 5 * 10;
    await sleep(20_000);
    const backlogSeconds = (Date.now() - started) / 1000;

    const lateness: (number | undefined)[] = [];
    for (let index = 0; index < options.probes; index++) {
      const paymentId = await initiate(probe);
      // Each of its status events fails once and is retried a second later.
      const attemptsOf = () =>
        receiver.received.filter(
          (entry) => entry.path === '/fail-first/probe' && entry.data.paymentId === paymentId,
        );
      await waitFor(() => new Set(attemptsOf().map((entry) => entry.id)).size >= 5, options.waitMs);
      const firsts = new Map<string, number>();
      for (const entry of attemptsOf()) if (!firsts.has(entry.id)) firsts.set(entry.id, entry.at);
      await waitFor(
        () => [...firsts.keys()].every((id) => attemptsOf().filter((entry) => entry.id === id).length >= 2),
        options.waitMs,
      );
      for (const [id, firstAt] of firsts) {
        const retry = attemptsOf().filter((entry) => entry.id === id)[1];
        lateness.push(retry === undefined ? undefined : Math.max(0, retry.at - (firstAt + 1_000)));
      }
      await sleep(2_000);
    }
    return { lateness: delaysOf(lateness, options.waitMs), backlog, backlogSeconds };
  } finally {
    await receiver.close();
  }
};
