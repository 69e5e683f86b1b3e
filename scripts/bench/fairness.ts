import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { LocalService } from '#local/service-process';
import { minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { type BenchClient, benchClient } from './support.ts';

/**
 * One tenant floods initiations (no webhook endpoint of its own) while another tenant initiates
 * a few transfers: the other tenant's webhook delay (from its transfer's final status change to
 * the receipt of that webhook) and its status reads, idle and during the flood, side by side.
 * Status events are recorded and delivered in tenant turns, so the flood should delay the other
 * tenant by its turns, not by the flood's length.
 */
export interface FairnessFigures {
  idle: ProbeFigures;
  flooded: ProbeFigures;
  floodInitiations: number;
  floodSeconds: number;
}

export interface ProbeFigures {
  /** Final status change to webhook receipt, per probe transfer. */
  webhookMs: number[];
  /** One status read of the probe tenant, per probe. */
  statusReadMs: number[];
}

const FINAL = 'AcceptedSettlementCompleted';
const FLOOD_TENANT = {
  clientId: 'flood-client',
  clientSecret: 'flood-client-secret-0123456789',
  tenant: 'flood',
};

/** A client of another tenant, made as `npm run clients -- create` makes one, on the service's data folder. */
const createFloodClient = (service: LocalService): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../client-create.ts', import.meta.url)),
        '--client-id',
        FLOOD_TENANT.clientId,
        '--client-secret',
        FLOOD_TENANT.clientSecret,
        '--scope',
        'transactions:read transactions:write',
        '--tenant',
        FLOOD_TENANT.tenant,
      ],
      { env: { ...process.env, DATA_DIR: service.dataDir }, stdio: 'inherit' },
    );
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`client-create exited ${code}`))));
  });

const floodToken = async (baseUrl: string): Promise<string> => {
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: FLOOD_TENANT.clientId,
      client_secret: FLOOD_TENANT.clientSecret,
    }),
  });
  if (response.status !== 200) throw new Error(`flood token: ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
};

export const benchFairness = async (
  service: LocalService,
  probe: BenchClient,
  options: { probes: number; floodSeconds: number; concurrency: number; timeoutMs: number },
): Promise<FairnessFigures> => {
  // The final status change's webhook, per paymentId: when it came, and the change's own time.
  const finals = new Map<string, { receivedAt: number; changedAt: number }>();
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const receivedAt = Date.now();
      response.writeHead(204).end();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        data: { paymentId: string; status: string; date: string };
      };
      if (event.data.status === FINAL && !finals.has(event.data.paymentId))
        finals.set(event.data.paymentId, { receivedAt, changedAt: Date.parse(event.data.date) });
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = receiver.address() as AddressInfo;
    const registered = await probe.post('/v1/webhook-endpoints', {
      url: `http://127.0.0.1:${port}/fairness`,
    });
    if (registered.status !== 201)
      throw new Error(`endpoint registration: ${registered.status} ${registered.text}`);

    const probeOnce = async (figures: ProbeFigures) => {
      const created = await probe.post('/v1/payments/credit-transfers', minimalCreditTransfer());
      if (created.status !== 202) throw new Error(`probe initiation: ${created.status} ${created.text}`);
      const { paymentId } = JSON.parse(created.text) as { paymentId: string };
      const readStarted = performance.now();
      await probe.get(`/v1/payments/credit-transfers/${paymentId}/status`);
      figures.statusReadMs.push(performance.now() - readStarted);
      const deadline = Date.now() + options.timeoutMs;
      for (;;) {
        const final = finals.get(paymentId);
        if (final !== undefined) {
          figures.webhookMs.push(final.receivedAt - final.changedAt);
          return;
        }
        if (Date.now() > deadline) throw new Error(`no webhook for ${paymentId} in ${options.timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    const idle: ProbeFigures = { webhookMs: [], statusReadMs: [] };
    for (let index = 0; index < options.probes; index++) await probeOnce(idle);

    await createFloodClient(service);
    const flood = benchClient(service.baseUrl, await floodToken(service.baseUrl));
    let flooding = true;
    let floodInitiations = 0;
    const floodStarted = performance.now();
    const flooders = Array.from({ length: options.concurrency }, async () => {
      while (flooding) {
        const reply = await flood.post('/v1/payments/credit-transfers', minimalCreditTransfer());
        if (reply.status === 202) floodInitiations += 1;
      }
    });
    // The probes start once the flood has built a backlog, as in the reported case.
    await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, (options.floodSeconds * 1000) / 3)));
    const flooded: ProbeFigures = { webhookMs: [], statusReadMs: [] };
    const probing = (async () => {
      for (let index = 0; index < options.probes; index++) await probeOnce(flooded);
    })();
    await new Promise((resolve) => setTimeout(resolve, options.floodSeconds * 1000));
    flooding = false;
    await Promise.all(flooders);
    const floodSeconds = (performance.now() - floodStarted) / 1000;
    await probing;
    return { idle, flooded, floodInitiations, floodSeconds };
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
};
