import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { type CreditTransfersClient, isFinal } from '../client.ts';
import { CreditTransfersError } from '../errors.ts';
import type {
  BatchFilters,
  CreditTransferBatch,
  CreditTransferBatchAnswer,
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

/** The batch's outcome once complete: its first page says so (a batch from before outcomes: every transfer final). */
const completed = async (
  client: CreditTransfersClient,
  batchId: string,
): Promise<{ batch: CreditTransferBatch; open: number; transfers?: BatchTransfer[] }> => {
  const batch = await client.batch(batchId);
  if (batch.open !== undefined)
    return { batch, open: batch.status === 'Completed' ? 0 : Math.max(batch.open, 1) };
  const transfers = await allTransfers(client, batchId);
  return { batch, open: transfers.filter((transfer) => !isFinal(transfer.status)).length, transfers };
};

/** Reads the batch until it is completed, or the timeout passes (an error: exit 1); then every transfer. */
const untilFinal = async (
  client: CreditTransfersClient,
  batchId: string,
  timeoutMs: number | undefined,
): Promise<{ batch: CreditTransferBatch; transfers: BatchTransfer[] }> => {
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  for (;;) {
    const { batch, open, transfers } = await completed(client, batchId);
    if (open === 0) return { batch, transfers: transfers ?? (await allTransfers(client, batchId)) };
    if (Date.now() + WAIT_INTERVAL_MS > deadline)
      throw new CreditTransfersError(
        `Batch ${batchId}: ${open} of ${batch.count} transfers still not final when the timeout passed`,
      );
    await new Promise((resolve) => setTimeout(resolve, WAIT_INTERVAL_MS));
  }
};

const BATCH_FIELDS = [
  'batchId',
  'status',
  'groupStatus',
  'count',
  'open',
  'createdAt',
  'completedAt',
  'messageId',
  'messageName',
];
const BATCH_FILTERS = ['messageId.eq', 'createdAt.gte', 'createdAt.lte'] as const;

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
        const accepted: CreditTransferBatchAnswer = await client.submitBatch(body, {
          idempotencyId: options.idempotencyId ?? fileIdempotencyKey(bytes),
        });
        if (accepted.replayed)
          process.stderr.write(
            `Batch ${accepted.batchId} was submitted before: this answer is a replay, and nothing was sent again\n`,
          );
        const format = context.format();
        if (!options.wait) {
          // JSON: the answer as the service sent it, each transfer's paymentId in message order.
          out(
            format === 'json'
              ? `${JSON.stringify(accepted, null, 2)}\n`
              : formatRecords(
                  format,
                  [{ ...accepted, replayed: accepted.replayed }],
                  [...ACCEPTED_FIELDS, 'replayed'],
                ),
          );
          return;
        }
        process.stderr.write(
          `Batch ${accepted.batchId}: ${accepted.count} transfers, waiting for each to be final\n`,
        );
        const { batch: outcome, transfers } = await untilFinal(client, accepted.batchId, options.timeout);
        const counts = countByStatus(transfers);
        const summary = `Batch ${accepted.batchId} ${outcome.status}${outcome.groupStatus ? ` ${outcome.groupStatus}` : ''}${accepted.replayed ? ' (replayed submission)' : ''}`;
        // Beside the counts, which stay one table (or CSV) a script can read.
        if (format !== 'json') process.stderr.write(`${summary}\n`);
        out(
          format === 'json'
            ? `${JSON.stringify(
                {
                  batchId: accepted.batchId,
                  status: outcome.status,
                  ...(outcome.groupStatus !== undefined && { groupStatus: outcome.groupStatus }),
                  ...(outcome.completedAt !== undefined && { completedAt: outcome.completedAt }),
                  replayed: accepted.replayed,
                  count: transfers.length,
                  statuses: counts,
                },
                null,
                2,
              )}\n`
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

  const list = batch
    .command('list')
    .description(
      'list batches, newest first, with their status, group status and counts (scope transactions:read)',
    )
    .option('--limit <n>', 'page size (1..100)', context.limitArgument)
    .option('--cursor <cursor>', 'start at this page (Pagination-Cursor of the previous one)')
    .option('--all', 'follow every cursor to the last page');
  for (const filter of BATCH_FILTERS) list.option(`--${filter} <value>`, `filter ${filter}`);
  list.action(async (options: Record<string, string | number | boolean | undefined>) => {
    const filters = Object.fromEntries(
      BATCH_FILTERS.filter((name) => options[name] !== undefined).map((name) => [
        name,
        String(options[name]),
      ]),
    ) as BatchFilters;
    const client = context.client();
    const paging = { ...(typeof options.limit === 'number' && { limit: options.limit }) };
    if (options.all) {
      const batches = [];
      for await (const found of client.batches(filters, paging)) batches.push(found);
      out(formatRecords(context.format(), batches, BATCH_FIELDS));
      return;
    }
    const page = await client.batchesPage(filters, {
      ...paging,
      ...(typeof options.cursor === 'string' && { cursor: options.cursor }),
    });
    out(formatRecords(context.format(), page.items, BATCH_FIELDS));
    if (page.cursor !== '') process.stderr.write(`More batches: --cursor ${page.cursor} (or --all)\n`);
  });

  batch
    .command('notification')
    .description("the batch's camt.054.001.08 debit notification (XML): an entry per settled transfer")
    .argument('<batchId>')
    .action(async (batchId: string) => out(await context.client().batchNotification(batchId)));

  program
    .command('notification')
    .description("a transfer's camt.054.001.08 debit notification (XML): its entry once settled")
    .argument('<paymentId>')
    .action(async (paymentId: string) => out(await context.client().notification(paymentId)));
};
