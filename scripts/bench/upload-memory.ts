import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { pathToFileURL } from 'node:url';
import { type LocalService, startLocalService } from '#local/service-process';
import { residentMegabytes } from './processes.ts';
import { fixed } from './support.ts';

/**
 * Anonymous uploads of large bodies at once, against the server's resident memory: before, at
 * its peak while they arrive, and after. Half go to the token endpoint (public), half to
 * initiation without a token. `npx tsx scripts/bench/upload-memory.ts` runs it on a fresh
 * service; `npm run bench` includes it.
 */

export interface UploadMemoryFigures {
  uploads: number;
  megabytes: number;
  beforeMb: number;
  peakMb: number;
  afterMb: number;
  seconds: number;
  /** Status -> uploads answered with it, or how the connection ended without an answer read. */
  answers: Record<string, number>;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** One upload: headers with the whole length, then the body chunk by chunk as the socket takes it. */
const upload = (baseUrl: string, path: string, bytes: number): Promise<string> =>
  new Promise((resolve) => {
    let answer = 'none';
    const outgoing = request(`${baseUrl}${path}`, {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(bytes) },
    });
    outgoing.on('response', (response) => {
      answer = String(response.statusCode);
      response.resume();
      response.on('end', () => {
        // The answer is in: the rest of the body is not wanted any more.
        outgoing.destroy();
        resolve(answer);
      });
    });
    outgoing.on('error', (error) =>
      resolve(answer === 'none' ? `refused, connection closed mid-body (${error.message})` : answer),
    );
    outgoing.on('close', () => resolve(answer));
    let sent = 0;
    const write = () => {
      while (sent < bytes && !outgoing.destroyed) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, bytes - sent));
        sent += piece.length;
        if (!outgoing.write(piece)) return void outgoing.once('drain', write);
      }
      if (sent >= bytes) outgoing.end();
    };
    write();
  });

const settle = () => new Promise((resolve) => setTimeout(resolve, 2000));

export const benchUploadMemory = async (
  service: LocalService,
  options: { uploads: number; megabytes: number },
): Promise<UploadMemoryFigures> => {
  // A few ordinary requests first, so the figures start from a warmed-up server.
  for (let index = 0; index < 5; index++) await fetch(`${service.baseUrl}/.well-known/jwks.json`);
  await settle();
  const beforeMb = (await residentMegabytes(service.pid)) ?? 0;
  let peakMb = beforeMb;
  const sampler = setInterval(async () => {
    peakMb = Math.max(peakMb, (await residentMegabytes(service.pid)) ?? 0);
  }, 50);
  const started = performance.now();
  const bytes = options.megabytes * 1024 * 1024;
  const answered = await Promise.all(
    Array.from({ length: options.uploads }, (_, index) =>
      upload(service.baseUrl, index % 2 === 0 ? '/oauth/token' : '/v1/payments/credit-transfers', bytes),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await settle();
  const afterMb = (await residentMegabytes(service.pid)) ?? 0;
  const answers: Record<string, number> = {};
  for (const status of answered) answers[status] = (answers[status] ?? 0) + 1;
  return { ...options, beforeMb, peakMb, afterMb, seconds, answers };
};

export const formatUploadMemory = (figures: UploadMemoryFigures): string[] => [
  `${figures.uploads} anonymous uploads of ${figures.megabytes} MB at once (half to the token endpoint, half to initiation without a token), server RSS:`,
  '',
  `- before: ${fixed(figures.beforeMb)} MB; peak while they arrived: ${fixed(figures.peakMb)} MB; 2 s after: ${fixed(figures.afterMb)} MB (ratio after / before **${fixed(figures.afterMb / figures.beforeMb, 2)}**)`,
  `- answers: ${Object.entries(figures.answers)
    .map(([status, count]) => `${count} x ${status}`)
    .join(', ')}; ${fixed(figures.seconds)} s in all`,
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const service = await startLocalService({ env: { LOCAL_LIFECYCLE: 'off' } });
  try {
    const figures = await benchUploadMemory(service, {
      uploads: Number(process.env.BENCH_UPLOADS ?? 100),
      megabytes: Number(process.env.BENCH_UPLOAD_MB ?? 10),
    });
    for (const line of formatUploadMemory(figures)) console.log(line);
  } finally {
    await service.stop();
    await rm(service.dataDir, { recursive: true, force: true });
  }
}
