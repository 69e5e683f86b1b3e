import { writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { STARTING_DETAIL } from '../local/starting.ts';
import { benchClient } from './support.ts';

/**
 * The load generator of `npm run bench:load`, run as its own process so its work does not weigh
 * on the service's event loop. For `seconds` it keeps `concurrency` requests in flight (closed
 * loop: the highest rate the service sustains), mixing every route a client uses, and writes what
 * it saw to `resultFile`: one row per request, every 202 initiation, every idempotency key.
 * Only 127.0.0.1 is ever targeted.
 */

export const ROUTES = [
  'initiate',
  'initiate (key)',
  'initiate (replay)',
  'status',
  'list',
  'cancel',
] as const;
export type LoadRoute = (typeof ROUTES)[number];

/** Share of each route in the mix, in percent. */
const MIX: [LoadRoute, number][] = [
  ['initiate', 30],
  ['initiate (key)', 20],
  ['initiate (replay)', 10],
  ['status', 20],
  ['list', 10],
  ['cancel', 10],
];

export interface TrafficOptions {
  baseUrl: string;
  token: string;
  seconds: number;
  concurrency: number;
  resultFile: string;
  /** Distinguishes the keys and accounts of one run from another's. */
  runLabel: string;
  /** Debtor accounts the run's transfers spread over (and its list pages filter by): 50 unless given. */
  accounts?: number;
}

export interface TrafficResult {
  /** [ms since epoch, route index, HTTP status (0: no answer), latency ms] per request. */
  requests: [number, number, number, number][];
  /** paymentId of every 202 initiation (with or without key, and replays answered 202). */
  accepted: string[];
  /** Idempotency key -> every paymentId answered for it (one expected). */
  keys: Record<string, string[]>;
  /** Replies to a replay that named another transfer than the first reply. */
  replayMismatches: number;
  /** 503 answers of a service still starting (told apart by their detail from any other 503). */
  startingAnswers: number;
  startedAt: number;
  stoppedAt: number;
}

const pick = (): LoadRoute => {
  let roll = Math.random() * 100;
  for (const [route, weight] of MIX) {
    roll -= weight;
    if (roll < 0) return route;
  }
  return 'status';
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const runTraffic = async (options: TrafficOptions): Promise<TrafficResult> => {
  if (new URL(options.baseUrl).hostname !== '127.0.0.1') throw new Error('load targets 127.0.0.1 only');
  const client = benchClient(options.baseUrl, options.token);
  const result: TrafficResult = {
    requests: [],
    accepted: [],
    keys: {},
    replayMismatches: 0,
    startingAnswers: 0,
    startedAt: Date.now(),
    stoppedAt: 0,
  };
  const counted = <R extends { status: number; text: string }>(reply: R): R => {
    if (reply.status === 503 && reply.text.includes(STARTING_DETAIL)) result.startingAnswers++;
    return reply;
  };
  const api: typeof client = {
    post: async (...args) => counted(await client.post(...args)),
    get: async (...args) => counted(await client.get(...args)),
  };
  const keyed: { key: string; body: unknown }[] = [];
  const recent: string[] = [];
  const accounts = Array.from(
    { length: options.accounts ?? 50 },
    (_, index) => `load-${options.runLabel}-${index}`,
  );
  const deadline = performance.now() + options.seconds * 1000;
  let sequence = 0;

  const accept = (text: string): string | undefined => {
    const paymentId = (JSON.parse(text) as { paymentId?: string }).paymentId;
    if (paymentId === undefined) return undefined;
    result.accepted.push(paymentId);
    recent.push(paymentId);
    if (recent.length > 2000) recent.shift();
    return paymentId;
  };
  const randomRecent = () => recent[Math.floor(Math.random() * recent.length)];

  const once = async (route: LoadRoute): Promise<number> => {
    const n = sequence++;
    const body = minimalCreditTransfer({
      debtorAccountId: accounts[n % accounts.length],
      amount: `${(n % 9000) + 1}.${String(n % 100).padStart(2, '0')}`,
    });
    switch (route) {
      case 'initiate': {
        const reply = await api.post('/v1/payments/credit-transfers', body);
        if (reply.status === 202) accept(reply.text);
        return reply.status;
      }
      case 'initiate (key)': {
        // idempotencyId holds at most 36 characters.
        const key = `${options.runLabel}-${n}`;
        const reply = await api.post('/v1/payments/credit-transfers', body, { idempotencyId: key });
        if (reply.status === 202) {
          const paymentId = accept(reply.text);
          if (paymentId) {
            result.keys[key] = [paymentId];
            keyed.push({ key, body });
          }
        }
        return reply.status;
      }
      case 'initiate (replay)': {
        const original = keyed[Math.floor(Math.random() * keyed.length)];
        if (!original) return once('initiate (key)');
        const reply = await api.post('/v1/payments/credit-transfers', original.body, {
          idempotencyId: original.key,
        });
        if (reply.status === 200 || reply.status === 202) {
          const paymentId = (JSON.parse(reply.text) as { paymentId?: string }).paymentId ?? '';
          const answers = result.keys[original.key] ?? [];
          if (!answers.includes(paymentId)) result.replayMismatches++;
          answers.push(paymentId);
          if (reply.status === 202) result.accepted.push(paymentId);
        }
        return reply.status;
      }
      case 'status': {
        const paymentId = randomRecent();
        if (!paymentId) return once('initiate');
        return (await api.get(`/v1/payments/credit-transfers/${paymentId}/status`)).status;
      }
      case 'list': {
        const account = accounts[Math.floor(Math.random() * accounts.length)];
        return (await api.get(`/v1/payments/credit-transfers?debtorAccountId.eq=${account}&limit=20`)).status;
      }
      case 'cancel': {
        const paymentId = randomRecent();
        if (!paymentId) return once('initiate');
        return (await api.post(`/v1/payments/credit-transfers/${paymentId}/cancellation`, {})).status;
      }
    }
  };

  const worker = async () => {
    while (performance.now() < deadline) {
      const route = pick();
      const begin = performance.now();
      let status = 0;
      try {
        status = await once(route);
      } catch {
        // No answer (the service is down or restarting): counted as status 0, tried again shortly.
        await sleep(100);
      }
      result.requests.push([Date.now(), ROUTES.indexOf(route), status, performance.now() - begin]);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  result.stoppedAt = Date.now();
  return result;
};

// Run as a process: options as JSON in argv[2].
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  const options = JSON.parse(process.argv[2] ?? '{}') as TrafficOptions;
  const result = await runTraffic(options);
  await writeFile(options.resultFile, JSON.stringify(result));
}
