import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { type CreditTransfersClient, isFinal } from '../client.ts';
import { CreditTransfersError } from '../errors.ts';
import type {
  CreditTransferBatch,
  CreditTransferBatchAccepted,
  CreditTransferBatchRequest,
} from '../types.ts';
import { formatRecords } from './output.ts';
import type { CommandContext } from './webhooks.ts';

/** Exit code of `--fail-unless-settled` when a transfer ended Rejected or Cancelled (as initiate's). */
const NOT_SETTLED = 4;
/** Between two reads of the batch while waiting. */
const WAIT_INTERVAL_MS = 2_000;

type BatchTransfer = CreditTransferBatch['creditTransfers'][number];

/** One line of the summary: how many transfers ended in this status, for this reason. */
export interface StatusCount {
  status: BatchTransfer['status'];
  statusReasonCode?: string;
  statusReason?: string;
  count: number;
}

const ACCEPTED_FIELDS = ['batchId', 'status', 'count', 'messageId', 'messageName'];
const COUNT_FIELDS = ['status', 'statusReasonCode', 'statusReason', 'count'];

/**
 * The file as the service takes it: a pain.001 (XML) as its bytes, anything else as a JSON batch.
 * XML is told by its first character, whatever the file is called.
 */
const readBatchFile = async (
  path: string,
  usageError: (message: string) => Error,
): Promise<{ body: CreditTransferBatchRequest | Uint8Array; bytes: Uint8Array }> => {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw usageError(`Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const text = new TextDecoder().decode(bytes).replace(/^\uFEFF/, '');
  if (text.trimStart().startsWith('<')) return { body: bytes, bytes };
  try {
    return { body: JSON.parse(text) as CreditTransferBatchRequest, bytes };
  } catch (error) {
    throw usageError(`${path} is neither a pain.001 (XML) nor JSON: ${(error as Error).message}`);
  }
};

/**
 * The idempotency key of a file: the same bytes give the same key, so running the same command
 * again (after a timeout, a lost answer) finds the batch already sent instead of paying it twice.
 */
export const fileIdempotencyKey = (bytes: Uint8Array): string =>
  createHash('sha256').update(bytes).digest('hex').slice(0, 32);

/** Every transfer of the batch, following `next` to the last page. */
const allTransfers = async (client: CreditTransfersClient, batchId: string): Promise<BatchTransfer[]> => {
  const transfers: BatchTransfer[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.batch(batchId, cursor === undefined ? {} : { cursor });
    transfers.push(...page.creditTransfers);
    cursor = page.next;
  } while (cursor !== undefined);
  return transfers;
};

/** Counts by status and reason code, most frequent first. */
export const countByStatus = (transfers: readonly BatchTransfer[]): StatusCount[] => {
  const counts = new Map<string, StatusCount>();
  for (const { status, statusReasonCode, statusReason } of transfers) {
    const key = JSON.stringify([status, statusReasonCode ?? '', statusReason ?? '']);
    const found = counts.get(key);
    if (found) found.count += 1;
    else
      counts.set(key, {
        status,
        ...(statusReasonCode !== undefined && { statusReasonCode }),
        ...(statusReason !== undefined && { statusReason }),
        count: 1,
      });
  }
  return [...counts.values()].sort(
    (a, b) =>
      b.count - a.count ||
      a.status.localeCompare(b.status) ||
      (a.statusReasonCode ?? '').localeCompare(b.statusReasonCode ?? ''),
  );
};

/** Reads the batch until every transfer is final, or the timeout passes (an error: exit 1). */
const untilFinal = async (
  client: CreditTransfersClient,
  batchId: string,
  timeoutMs: number | undefined,
): Promise<BatchTransfer[]> => {
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  for (;;) {
    const transfers = await allTransfers(client, batchId);
    const open = transfers.filter((transfer) => !isFinal(transfer.status)).length;
    if (open === 0) return transfers;
    if (Date.now() + WAIT_INTERVAL_MS > deadline)
      throw new CreditTransfersError(
        `Batch ${batchId}: ${open} of ${transfers.length} transfers still not final when the timeout passed`,
      );
    await new Promise((resolve) => setTimeout(resolve, WAIT_INTERVAL_MS));
  }
};

export const addBatchCommands = (program: Command, context: CommandContext): void => {
  const { out } = context;
  const batch = program
    .command('batch')
    .description('credit transfer batches: a pain.001 file or a JSON batch (scope transactions:write)');

  batch
    .command('submit')
    .description(
      'send a batch file: a pain.001 (pain.001.001.09 or .03) or JSON ({"creditTransfers": [...]}); --wait prints counts by final status and reason code',
    )
    .argument('<file>', 'the pain.001 XML or JSON batch')
    .option(
      '--idempotency-id <key>',
      "idempotency key (default: derived from the file's bytes, so sending the same file again is a replay)",
    )
    .option('--wait', 'wait until every transfer is final, then print the counts')
    .option(
      '--timeout <duration>',
      'give up waiting after this long (exit 1), e.g. 90s, 15m',
      context.durationArgument,
    )
    .option('--fail-unless-settled', 'exit 4 when any transfer ended Rejected or Cancelled')
    .action(
      async (
        file: string,
        options: { idempotencyId?: string; wait?: boolean; timeout?: number; failUnlessSettled?: boolean },
      ) => {
        const { body, bytes } = await readBatchFile(file, context.usageError);
        const client = context.client();
        const accepted: CreditTransferBatchAccepted = await client.submitBatch(body, {
          idempotencyId: options.idempotencyId ?? fileIdempotencyKey(bytes),
        });
        const format = context.format();
        if (!options.wait) {
          // JSON: the answer as the service sent it, each transfer's paymentId in message order.
          out(
            format === 'json'
              ? `${JSON.stringify(accepted, null, 2)}\n`
              : formatRecords(format, [accepted], ACCEPTED_FIELDS),
          );
          return;
        }
        process.stderr.write(
          `Batch ${accepted.batchId}: ${accepted.count} transfers, waiting for each to be final\n`,
        );
        const transfers = await untilFinal(client, accepted.batchId, options.timeout);
        const counts = countByStatus(transfers);
        out(
          format === 'json'
            ? `${JSON.stringify({ batchId: accepted.batchId, count: transfers.length, statuses: counts }, null, 2)}\n`
            : formatRecords(format, counts, COUNT_FIELDS),
        );
        if (
          options.failUnlessSettled &&
          counts.some((line) => line.status !== 'AcceptedSettlementCompleted')
        ) {
          const unsettled = transfers.filter((transfer) => transfer.status !== 'AcceptedSettlementCompleted');
          process.stderr.write(`Not settled: ${unsettled.length} of ${transfers.length} transfers\n`);
          process.exitCode = NOT_SETTLED;
        }
      },
    );
};
