import type { LocalService } from '#local/service-process';
import { largePain001 } from './batch.ts';
import {
  deepPain001,
  manyElementsPain001,
  manyTransactionsPain001,
  minimalPain001,
} from './hostile-pain001.ts';
import { cpuMilliseconds, residentMegabytes } from './processes.ts';
import { fixed, requestToken } from './support.ts';

/**
 * Hostile pain.001 uploads side by side with ordinary ones: the server's CPU time for each, its
 * answer, and how long a list request sent meanwhile waited (one process serves every tenant).
 * Each upload is sent alone, so the CPU the server used meanwhile is the upload's.
 */

export interface HostileUploadFigures {
  name: string;
  bytes: number;
  status: number;
  answer: string;
  serverCpuMs: number;
  wallMs: number;
  listWaitMs: number;
  rssAfterMb: number;
}

const BATCHES = '/v1/payments/credit-transfer-batches';

const uploads = async (): Promise<[string, string][]> => {
  const stamp = Date.now();
  return [
    [
      'an ordinary pain.001: 2,000 transfers of the example',
      await largePain001(2000, `BENCH-NORMAL-${stamp}`),
    ],
    ['2,000 minimal transfers', minimalPain001(`BENCH-MINIMAL-${stamp}`, 2000)],
    [
      '5 MiB: one PmtInf of minimal CdtTrfTxInf (47,000 and more)',
      manyTransactionsPain001(`BENCH-MANY-${stamp}`),
    ],
    ['1 MB: 600 subtrees of 250 nested elements', deepPain001(`BENCH-DEEP-${stamp}`)],
    ['5 MiB: 1.3 million empty elements in SplmtryData', manyElementsPain001(`BENCH-ELEMENTS-${stamp}`)],
  ];
};

export const benchHostileUploads = async (service: LocalService): Promise<HostileUploadFigures[]> => {
  const token = await requestToken(service.baseUrl);
  const headers = { Authorization: `Bearer ${token}` };
  const figures: HostileUploadFigures[] = [];
  for (const [name, xml] of await uploads()) {
    const cpuBefore = (await cpuMilliseconds(service.pid)) ?? 0;
    const started = performance.now();
    const answer = fetch(new URL(BATCHES, service.baseUrl), {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/xml' },
      body: xml,
    });
    // Another request while the upload is read: how long the one process keeps it waiting.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const listed = performance.now();
    await (
      await fetch(new URL('/v1/payments/credit-transfers?limit=1', service.baseUrl), { headers })
    ).text();
    const listWaitMs = performance.now() - listed;
    const reply = await answer;
    const text = await reply.text();
    const wallMs = performance.now() - started;
    const cpuAfter = (await cpuMilliseconds(service.pid)) ?? 0;
    const body = JSON.parse(text) as { count?: number; error?: string; invalidParams?: { reason: string }[] };
    figures.push({
      name,
      bytes: Buffer.byteLength(xml),
      status: reply.status,
      answer:
        reply.status === 202
          ? `${body.count} transfers taken`
          : `${body.error}${body.invalidParams?.[0] ? `: ${body.invalidParams[0].reason}` : ''}`,
      serverCpuMs: cpuAfter - cpuBefore,
      wallMs,
      listWaitMs,
      rssAfterMb: (await residentMegabytes(service.pid)) ?? 0,
    });
  }
  return figures;
};

export const hostileUploadRows = (figures: readonly HostileUploadFigures[]): string[][] =>
  figures.map((figure) => [
    figure.name,
    fixed(figure.bytes / 1024, 0),
    `${figure.status} ${figure.answer}`,
    fixed(figure.serverCpuMs, 0),
    fixed(figure.wallMs, 0),
    fixed(figure.listWaitMs, 0),
    fixed(figure.rssAfterMb, 0),
  ]);
