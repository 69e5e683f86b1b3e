import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LocalService } from '#local/service-process';

/**
 * A correct token request's time while others flood the token endpoint with made-up client ids:
 * from one address (its budget of secret checks is soon spent, so the flood derives nothing), and
 * the same flood spread over many addresses (each within its budget: every request derives, as
 * every request did before the budget). Loopback is a whole range, so 127.0.0.x are other callers.
 */
export interface TokenFloodFigures {
  quietP50Ms: number;
  oneAddress: FloodFigures;
  manyAddresses: FloodFigures;
}

export interface FloodFigures {
  /** The correct requests' median, during the flood. */
  correctP50Ms: number;
  /** Flood requests answered per second meanwhile. */
  floodPerSecond: number;
}

const FLOOD_CONCURRENCY = 20;
const SPREAD_ADDRESSES = 40;
const CORRECT_REQUESTS = 10;

const tokenRequest = (
  baseUrl: string,
  localAddress: string,
  clientId: string,
  clientSecret: string,
): Promise<number> =>
  new Promise((resolve, reject) => {
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }).toString();
    const sent = request(
      `${baseUrl}/oauth/token`,
      {
        method: 'POST',
        localAddress,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** The correct requests, one after another, from 127.0.0.1; each must get its token. */
const correctRequests = async (baseUrl: string, clientId: string, clientSecret: string) => {
  const times: number[] = [];
  for (let index = 0; index < CORRECT_REQUESTS; index++) {
    const started = performance.now();
    const status = await tokenRequest(baseUrl, '127.0.0.1', clientId, clientSecret);
    if (status !== 200) throw new Error(`A correct token request was answered ${status} during the flood`);
    times.push(performance.now() - started);
  }
  return median(times);
};

const duringFlood = async (
  baseUrl: string,
  client: { clientId: string; clientSecret: string },
  addressOf: (request: number) => string,
): Promise<FloodFigures> => {
  let running = true;
  let answered = 0;
  let sent = 0;
  const flooder = async () => {
    while (running) {
      const address = addressOf(sent++);
      await tokenRequest(baseUrl, address, `made-up-${randomUUID()}`, 'not-the-secret-xxxxxxxx');
      answered += 1;
    }
  };
  const started = performance.now();
  const flooders = Array.from({ length: FLOOD_CONCURRENCY }, flooder);
  // Let the one address spend its budget first, as a real flood would have.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const correctP50Ms = await correctRequests(baseUrl, client.clientId, client.clientSecret);
  running = false;
  await Promise.all(flooders);
  return { correctP50Ms, floodPerSecond: answered / ((performance.now() - started) / 1000) };
};

export const benchTokenFlood = async (
  service: LocalService,
  client: { clientId: string; clientSecret: string },
): Promise<TokenFloodFigures> => {
  await correctRequests(service.baseUrl, client.clientId, client.clientSecret); // warm-up
  const quietP50Ms = await correctRequests(service.baseUrl, client.clientId, client.clientSecret);
  const oneAddress = await duringFlood(service.baseUrl, client, () => '127.0.0.9');
  const manyAddresses = await duringFlood(
    service.baseUrl,
    client,
    (index) => `127.0.1.${1 + (index % SPREAD_ADDRESSES)}`,
  );
  return { quietP50Ms, oneAddress, manyAddresses };
};
