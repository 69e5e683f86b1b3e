import { readFile } from 'node:fs/promises';
import { text as streamText } from 'node:stream/consumers';
import type { Command } from 'commander';
import { PreconditionFailedError } from '../errors.ts';
import type {
  BatchApprovalResult,
  CreditTransfer,
  LimitUsage,
  PaymentControls,
  PaymentControlsRequest,
} from '../types.ts';
import { type Format, formatRecords, formatTransfer, type Row, table } from './output.ts';
import type { CommandContext } from './webhooks.ts';

/** What the approval commands take besides the others' context: who is calling. */
export interface ApprovalContext extends CommandContext {
  clientId: () => string;
}

/** A pending transfer in one line: what it pays, the rule that holds it, how far its approvals are. */
const PENDING_TABLE = [
  'paymentId',
  'amount',
  'currency',
  'debtorAccountId',
  'creditorAccountId',
  'rule',
  'approvals',
  'expiresAt',
];

const pendingRow = (record: object): Row => {
  const transfer = record as CreditTransfer;
  const { approval } = transfer;
  return {
    ...transfer,
    rule: approval?.rule,
    approvals: approval ? `${approval.approvals.length}/${approval.approvalsRequired}` : '',
    expiresAt: approval?.expiresAt,
  };
};

const NOT_DECIDED_FIELDS = ['paymentId', 'reason'];

const USAGE_FIELDS = [
  'debtorAccountId',
  'currency',
  'period',
  'onBreach',
  'maxAmount',
  'usedAmount',
  'remainingAmount',
  'maxCount',
  'usedCount',
  'remainingCount',
  'periodStart',
  'periodEnd',
] as const satisfies readonly (keyof LimitUsage)[];

const VERSION_FIELDS = ['version', 'etag', 'clientId', 'createdAt'];

const RULE_FIELDS = [
  'name',
  'approvalsRequired',
  'currency',
  'minimumAmount',
  'paymentMethod',
  'debtorAccountId',
  'newCreditorOnly',
  'initiatingClientId',
];
const LIMIT_FIELDS = ['debtorAccountId', 'currency', 'period', 'maxAmount', 'maxCount', 'onBreach'];

/** The controls for a person: the ETag, the expiry, a table of rules and one of limits. */
const controlsText = (controls: PaymentControls, etag: string): string => {
  const rules = controls.approvalRules as unknown as Row[];
  const limits = controls.limits as unknown as Row[];
  return [
    `ETag: ${etag}`,
    `Approval expiry: ${controls.approvalExpiry}`,
    '',
    rules.length === 0 ? 'Approval rules: none' : `Approval rules:\n${table(RULE_FIELDS, rules)}`,
    limits.length === 0 ? 'Limits: none' : `Limits:\n${table(LIMIT_FIELDS, limits)}`,
  ]
    .join('\n')
    .replace(/\n*$/, '\n');
};

/** The batch decision's answer: the counts in a line, then the transfers it could not decide. */
const batchResultText = (format: Format, result: BatchApprovalResult): string => {
  if (format === 'json') return `${JSON.stringify(result, null, 2)}\n`;
  if (format === 'csv') return formatRecords('csv', result.notDecided, NOT_DECIDED_FIELDS);
  const summary = `Batch ${result.batchId}: ${result.decision} decided for ${result.decided} ${result.decided === 1 ? 'transfer' : 'transfers'}, ${result.notDecided.length} not decided\n`;
  return result.notDecided.length === 0
    ? summary
    : `${summary}${formatRecords('table', result.notDecided, NOT_DECIDED_FIELDS)}`;
};

export const addApprovalCommands = (program: Command, context: ApprovalContext): void => {
  const { out } = context;

  const decide = (decision: 'approve' | 'reject') =>
    program
      .command(decision)
      .description(
        `${decision} a transfer that waits for approval (Pending), or with --batch every pending transfer of a batch (scope transactions:approve)`,
      )
      .argument('[paymentId]', `the transfer to ${decision}`)
      .option('--batch <batchId>', `${decision} every pending transfer of this batch`)
      .option('--reason <text>', 'why (kept with the decision)')
      .option('--idempotency-key <key>', 'idempotency key (default: a new UUID; reuse it to repeat safely)')
      .action(
        async (
          paymentId: string | undefined,
          options: { batch?: string; reason?: string; idempotencyKey?: string },
        ) => {
          if ((paymentId === undefined) === (options.batch === undefined))
            throw context.usageError(`${decision} takes a paymentId or --batch <batchId>, one of them`);
          const client = context.client();
          const common = {
            ...(options.reason !== undefined && { reason: options.reason }),
            ...(options.idempotencyKey !== undefined && { idempotencyKey: options.idempotencyKey }),
          };
          if (options.batch !== undefined) {
            const result = await client.approveBatch(options.batch, { decision, ...common });
            out(batchResultText(context.format(), result));
            return;
          }
          const answer =
            decision === 'approve'
              ? await client.approve(paymentId as string, common)
              : await client.reject(paymentId as string, common);
          out(formatTransfer(context.format(), answer));
        },
      );
  decide('approve');
  decide('reject');

  program
    .command('pending')
    .description(
      "transfers waiting for this client's decision (initiated by another client, not decided yet), oldest expiry first (scopes transactions:read, transactions:approve)",
    )
    .action(async () => {
      const client = context.client();
      const self = context.clientId();
      const pending: CreditTransfer[] = [];
      for await (const transfer of client.list({ 'status.eq': 'Pending' }))
        if (
          transfer.approval?.initiatingClientId !== self &&
          !transfer.approval?.approvals.some((decision) => decision.clientId === self)
        )
          pending.push(transfer);
      pending.sort((a, b) => (a.approval?.expiresAt ?? '').localeCompare(b.approval?.expiresAt ?? ''));
      const format = context.format();
      out(
        format === 'json'
          ? `${JSON.stringify(pending, null, 2)}\n`
          : formatRecords(format, pending, PENDING_TABLE, PENDING_TABLE, pendingRow),
      );
    });

  const controls = program
    .command('controls')
    .description("the tenant's payment controls: approval rules and limits (scope payment-controls:manage)");

  controls
    .command('get')
    .description('the current payment controls and their ETag (json: the document alone, ETag on stderr)')
    .action(async () => {
      const { controls: document, etag } = await context.client().paymentControls.get();
      if (context.format() === 'json') {
        process.stderr.write(`ETag: ${etag}\n`);
        out(`${JSON.stringify(document, null, 2)}\n`);
        return;
      }
      if (context.format() === 'csv')
        throw context.usageError('controls get prints a table or json (--format json), not csv');
      out(controlsText(document, etag));
    });

  controls
    .command('set')
    .description('replace the payment controls with the JSON document in a file (- for standard input)')
    .argument('<file>', 'the whole document: approvalRules, approvalExpiry, limits')
    .option(
      '--if-match <etag>',
      'the ETag of the version you changed (controls get); refused if it is no longer current. Default: the current one',
    )
    .action(async (file: string, options: { ifMatch?: string }) => {
      const document = await readJsonFile(file, context.usageError);
      const client = context.client();
      const ifMatch = options.ifMatch ?? (await client.paymentControls.get()).etag;
      let stored: Awaited<ReturnType<typeof client.paymentControls.put>>;
      try {
        stored = await client.paymentControls.put(document as PaymentControlsRequest, { ifMatch });
      } catch (error) {
        if (error instanceof PreconditionFailedError)
          throw context.usageError(
            `Not changed: the payment controls are no longer at ETag ${ifMatch}, someone changed them since. Read them again (controls get), apply your change, and set it with the new ETag.`,
          );
        throw error;
      }
      if (context.format() === 'json') {
        process.stderr.write(`ETag: ${stored.etag}\n`);
        out(`${JSON.stringify(stored.controls, null, 2)}\n`);
        return;
      }
      out(`Stored, replacing ETag ${ifMatch}\n${controlsText(stored.controls, stored.etag)}`);
    });

  controls
    .command('versions')
    .description('every version of the payment controls, newest first: who stored it and when')
    .action(async () => {
      const versions = [];
      for await (const version of context.client().paymentControls.versions()) versions.push(version);
      out(formatRecords(context.format(), versions, VERSION_FIELDS));
    });

  controls
    .command('usage')
    .description('the limits on an account in a currency: what the current period has used and has left')
    .requiredOption('--account <debtorAccountId>', 'the debtor account')
    .requiredOption('--currency <code>', 'the currency (ISO 4217)')
    .action(async (options: { account: string; currency: string }) => {
      const usage = await context
        .client()
        .paymentControls.usage({ debtorAccountId: options.account, currency: options.currency });
      const format = context.format();
      out(
        format === 'json'
          ? `${JSON.stringify(usage, null, 2)}\n`
          : formatRecords(format, usage.limits, USAGE_FIELDS),
      );
    });
};

const readJsonFile = async (path: string, usageError: (message: string) => Error): Promise<unknown> => {
  let text: string;
  try {
    text = path === '-' ? await streamText(process.stdin) : await readFile(path, 'utf8');
  } catch (error) {
    throw usageError(`Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`${path} is not JSON: ${(error as Error).message}`);
  }
};
