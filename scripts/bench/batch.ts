import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import type { LocalService } from '#local/service-process';
import { requestToken } from './support.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BATCHES = '/v1/payments/credit-transfer-batches';

/**
 * A pain.001.001.09 of `count` transfers: the example's first payment group, its first transaction
 * repeated with its own ids and amount, executed today.
 */
export const largePain001 = async (count: number, messageId: string): Promise<string> => {
  const example = await readFile(join(PROJECT_ROOT, 'examples', 'pain.001.001.09.xml'), 'utf8');
  const group = /<PmtInf>[\s\S]*?<\/PmtInf>/.exec(example)?.[0] ?? '';
  const header = group.slice(0, group.indexOf('<CdtTrfTxInf>'));
  const transaction = /<CdtTrfTxInf>[\s\S]*?<\/CdtTrfTxInf>/.exec(group)?.[0] ?? '';
  const amountOf = (index: number) => `${(index % 100) + 1}.00`;
  const transactions = Array.from({ length: count }, (_, index) =>
    transaction
      .replace(/<InstrId>[^<]*<\/InstrId>/, `<InstrId>BENCH-${index}</InstrId>`)
      .replace(/<EndToEndId>[^<]*<\/EndToEndId>/, `<EndToEndId>E2E-BENCH-${index}</EndToEndId>`)
      .replace(/(<InstdAmt Ccy="EUR">)[^<]*/, `$1${amountOf(index)}`),
  ).join('');
  const euros = Array.from({ length: count }, (_, index) => (index % 100) + 1).reduce((a, b) => a + b, 0);
  const sum = `${euros}.00`;
  const today = new Date().toISOString().slice(0, 10);
  const paymentGroup = header
    .replace(/<NbOfTxs>[^<]*<\/NbOfTxs>/, `<NbOfTxs>${count}</NbOfTxs>`)
    .replace(/<CtrlSum>[^<]*<\/CtrlSum>/, `<CtrlSum>${sum}</CtrlSum>`)
    .replace(/<Dt>[^<]*<\/Dt>/, `<Dt>${today}</Dt>`);
  const groupHeader = (/<GrpHdr>[\s\S]*?<\/GrpHdr>/.exec(example)?.[0] ?? '')
    .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>${messageId}</MsgId>`)
    .replace(/<NbOfTxs>[^<]*<\/NbOfTxs>/, `<NbOfTxs>${count}</NbOfTxs>`)
    .replace(/<CtrlSum>[^<]*<\/CtrlSum>/, `<CtrlSum>${sum}</CtrlSum>`);
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn>${groupHeader}${paymentGroup}${transactions}</PmtInf></CstmrCdtTrfInitn></Document>`;
};

export interface BatchBenchFigures {
  transfers: number;
  /** Requests sent until the 202 (a 503 is sent again). */
  attempts: number;
  bytes: number;
  /** From sending the request to its 202. */
  msTo202: number;
  /** From the 202 to the last transfer's first status change (its history's second entry). */
  msFrom202ToLastFirstChange: number;
  /** From the 202 to the first transfer's first status change. */
  msFrom202ToFirstFirstChange: number;
}

/** Every transfer's first status change after Received, by the date its history gives it. */
const firstChanges = async (service: LocalService): Promise<number[]> => {
  const table = createDocumentClient(undefined, service.tableSocket);
  const dates: number[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.scan({
      TableName: 'credit-transfers',
      FilterExpression: '#type = :transfer',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':transfer': 'CreditTransfer' },
      ...(start !== undefined && { ExclusiveStartKey: start }),
    });
    for (const item of page.Items ?? []) {
      const second = (item.history as { date: string }[])[1];
      dates.push(second === undefined ? Number.NaN : Date.parse(second.date));
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return dates;
};

/**
 * One pain.001 of `count` transfers against a fresh local service with its workflow on: the time
 * to its 202, and from the 202 to the moment the last of its transfers left Received.
 */
export const benchBatchLifecycles = async (
  service: LocalService,
  count: number,
): Promise<BatchBenchFigures> => {
  const token = await requestToken(service.baseUrl);
  const xml = await largePain001(count, `BENCH-${Date.now()}`);
  const send = () =>
    fetch(new URL(BATCHES, service.baseUrl), {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/xml' },
      body: xml,
    });
  const sent = performance.now();
  // A 503 (out of time on a loaded machine) is sent again as a client would: the same MsgId
  // carries on where the last attempt stopped. The time to the 202 covers every attempt.
  let reply = await send();
  let attempts = 1;
  for (; reply.status === 503 && attempts < 10; attempts++) {
    await reply.text();
    reply = await send();
  }
  const answered = performance.now();
  const answeredAt = Date.now();
  const text = await reply.text();
  if (reply.status !== 202) throw new Error(`the batch answered ${reply.status}: ${text.slice(0, 500)}`);

  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    const dates = await firstChanges(service);
    if (dates.length === count && dates.every((date) => !Number.isNaN(date))) {
      return {
        transfers: count,
        attempts,
        bytes: Buffer.byteLength(xml),
        msTo202: answered - sent,
        msFrom202ToLastFirstChange: Math.max(...dates) - answeredAt,
        msFrom202ToFirstFirstChange: Math.min(...dates) - answeredAt,
      };
    }
    if (Date.now() > deadline) throw new Error('the batch did not leave Received within 15 minutes');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
};
