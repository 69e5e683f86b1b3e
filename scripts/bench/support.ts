import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { wholeNumber } from '#shared/config';

export interface RunFigures {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const percentile = (sorted: number[], fraction: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;

/** Runs `requests` calls of `task`, at most `concurrency` at a time, and times them. */
export const runConcurrently = async (
  options: { requests: number; concurrency: number },
  task: (index: number) => Promise<void>,
): Promise<RunFigures> => {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < options.requests) {
      const index = next++;
      const begin = performance.now();
      await task(index);
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: options.requests,
    seconds,
    perSecond: options.requests / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
  };
};

/** Figures of several runs taken as one: total requests over total time, worst percentiles. */
export const combine = (runs: RunFigures[]): RunFigures => {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  return {
    requests,
    seconds,
    perSecond: requests / seconds,
    p50Ms: Math.max(...runs.map((run) => run.p50Ms)),
    p99Ms: Math.max(...runs.map((run) => run.p99Ms)),
  };
};

export interface BenchClient {
  post(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; text: string }>;
  get(
    path: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }>;
}

const send = (
  agent: Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> =>
  new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers, agent }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () =>
        resolve({
          status: incoming.statusCode ?? 0,
          text: Buffer.concat(chunks).toString(),
          headers: incoming.headers,
        }),
      );
      incoming.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });

/** A keep-alive HTTP client with little overhead of its own, so the figures are the service's. */
export const benchClient = (baseUrl: string, token: string): BenchClient => {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  return {
    post: (path, body, headers = {}) =>
      send(
        agent,
        new URL(path, baseUrl),
        'POST',
        { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers },
        JSON.stringify(body),
      ),
    get: (path, headers = {}) =>
      send(agent, new URL(path, baseUrl), 'GET', { Authorization: `Bearer ${token}`, ...headers }),
  };
};

export const fixed = (value: number, digits = 1): string => value.toFixed(digits);

/** A bench setting (a flag or an environment variable): a count of at least 1, the fallback when unset. */
export const benchCount = (name: string, text: string | undefined, fallback: number): number =>
  text === undefined ? fallback : wholeNumber(name, text, { min: 1 });

/** An access token of the local service's seeded client, with every scope. */
export const requestToken = async (baseUrl: string): Promise<string> => {
  const { LOCAL_CLIENT } = await import('#local/service-process');
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: LOCAL_CLIENT.clientId,
      client_secret: LOCAL_CLIENT.clientSecret,
    }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
};
