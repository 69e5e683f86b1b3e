import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { Command, InvalidArgumentError } from 'commander';
import { createDocumentClient, regionalDocumentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbLifecycleStore } from '#adapters/credit-transfers/credit-transfer-lifecycle-store';
import { systemClock } from '#domain/commons/ports';
import {
  OPERATOR_REJECTION_REASON,
  ParkedTransferMovedError,
  rejectParkedCreditTransfer,
  SubmittedToClearingError,
  TransferNotParkedError,
  unparkCreditTransfer,
  unparkCreditTransfers,
} from '#domain/credit-transfers/parked-transfers';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import { dataFolderFiles } from '#local/data-folder';

/**
 * `npm run transfers -- parked|retry|reject`: the operator's side of parked transfers (those that
 * failed every attempt, docs/operations.md). Without --table it works on the running local
 * service's table; with --table on a deployed stage, with the operator's AWS credentials.
 */

interface TargetOptions {
  table?: string;
  region?: string;
}

class OperatorError extends Error {}

interface Target {
  description: string;
  store: () => Promise<{ store: DynamoDbLifecycleStore; actor: string }>;
  local: boolean;
  close(): void;
}

const localTarget = (): Target => {
  const dataDir = resolve(process.env.DATA_DIR || '.local-data');
  const socket = process.env.DYNAMODB_SOCKET || dataFolderFiles(dataDir).tableSocket;
  const tableName = process.env.TABLE_NAME || 'credit-transfers';
  return {
    description: `table ${tableName} of the local service (DynamoDB on ${socket})`,
    local: true,
    store: async () => ({
      store: new DynamoDbLifecycleStore(createDocumentClient(undefined, socket), tableName),
      actor: `local:${userInfo().username}`,
    }),
    close: () => {},
  };
};

const awsTarget = (options: TargetOptions & { table: string }): Target => {
  const sts = new STSClient(options.region ? { region: options.region } : {});
  return {
    description: `DynamoDB table ${options.table}${options.region ? ` in ${options.region}` : ''}`,
    local: false,
    store: async () => {
      // Who decided: the IAM principal, recorded in the transfer's history.
      const { Arn } = await sts.send(new GetCallerIdentityCommand({}));
      const aws = { credentials: sts.config.credentials, region: await sts.config.region() };
      return {
        store: new DynamoDbLifecycleStore(regionalDocumentClient(aws), options.table),
        actor: Arn ?? 'unknown',
      };
    },
    close: () => sts.destroy(),
  };
};

const targetOf = (options: TargetOptions): Target => {
  if (options.table !== undefined) return awsTarget({ ...options, table: options.table });
  if (options.region !== undefined)
    throw new OperatorError('--region applies only with --table (a deployed stage)');
  return localTarget();
};

const explained = (error: unknown, target: Target): Error => {
  if (
    error instanceof OperatorError ||
    error instanceof TransferNotParkedError ||
    error instanceof SubmittedToClearingError ||
    error instanceof ParkedTransferMovedError
  ) {
    return error;
  }
  const name = error instanceof Error ? error.name : '';
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const hint = target.local ? '; is the service running (npm start)?' : '';
  if (name === 'ResourceNotFoundException')
    return new OperatorError(`the ${target.description} does not exist${hint}`);
  if (code === 'ECONNREFUSED' || code === 'ENOENT')
    return new OperatorError(`cannot reach the ${target.description}${hint}`);
  return new OperatorError(
    `failed on the ${target.description}: ${name || 'Error'}: ${error instanceof Error ? error.message : String(error)}`,
  );
};

const withStore = async <T>(
  options: TargetOptions,
  work: (store: DynamoDbLifecycleStore, actor: string) => Promise<T>,
): Promise<T> => {
  const target = targetOf(options);
  try {
    const { store, actor } = await target.store();
    return await work(store, actor);
  } catch (error) {
    throw explained(error, target);
  } finally {
    target.close();
  }
};

const isoTime = (value: string): Date => {
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value) || Number.isNaN(time))
    throw new InvalidArgumentError('give an ISO 8601 time, such as 2026-12-07T09:00:00Z');
  return new Date(time);
};

const positiveWhole = (value: string): number => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 10_000)
    throw new InvalidArgumentError('give a whole number from 1 to 10000');
  return number;
};

/** One line per parked transfer: what an operator needs to decide, never payment data. */
const describe = (record: CreditTransferRecord): string =>
  [
    record.tenant.padEnd(16),
    record.paymentId.padEnd(36),
    record.status.padEnd(28),
    `parked ${record.parked?.at}`,
    `after ${record.parked?.attempts} attempt(s)`,
    `(${record.parked?.reason})`,
    record.submittedAt !== undefined ? 'submitted to clearing' : '',
  ]
    .join('  ')
    .trimEnd();

const targetOptions = (command: Command): Command =>
  command
    .option(
      '--table <name>',
      'a deployed stage: the table (stack output TableName); default: the local service',
    )
    .option('--region <region>', 'with --table: the AWS region (default: from the AWS configuration)');

const transferOptions = (command: Command): Command =>
  targetOptions(
    command
      .requiredOption('--tenant <tenant>', 'the tenant the transfer belongs to')
      .requiredOption('--payment-id <id>', 'the transfer'),
  );

export const transfersProgram = (): Command => {
  const program = new Command('transfers')
    .description('Parked credit transfers: list them, retry one, or reject one')
    .showSuggestionAfterError()
    .configureOutput({ outputError: (message, write) => write(message.replace(/^error: /, 'transfers: ')) });

  targetOptions(
    program
      .command('parked')
      .description('List the transfers parked for an operator, longest parked first')
      .option('--limit <n>', 'at most this many', positiveWhole, 100)
      .option('--json', 'one JSON document, for scripts', false),
  ).action(async (options: TargetOptions & { limit: number; json: boolean }) => {
    await withStore(options, async (store) => {
      const parked = await store.parked(options.limit);
      if (options.json) {
        const summary = parked.map(({ tenant, paymentId, status, parked, submittedAt }) => ({
          tenant,
          paymentId,
          status,
          parked,
          submittedToClearing: submittedAt !== undefined,
        }));
        return console.log(JSON.stringify(summary, null, 2));
      }
      if (parked.length === 0) return console.log('No parked transfers');
      for (const record of parked) console.log(describe(record));
    });
  });

  targetOptions(
    program
      .command('retry')
      .description(
        'Give a parked transfer (or, with --all-parked, every one) a new round of attempts: the reconciler starts it on its next run',
      )
      .option('--tenant <tenant>', 'the tenant the transfer belongs to')
      .option('--payment-id <id>', 'the transfer')
      .option('--all-parked', 'every parked transfer, after an outage that parked many', false)
      .option(
        '--since <time>',
        'with --all-parked: only those parked at or after this ISO 8601 time',
        isoTime,
      ),
  ).action(
    async (
      options: TargetOptions & { tenant?: string; paymentId?: string; allParked: boolean; since?: Date },
    ) => {
      const one = options.tenant !== undefined || options.paymentId !== undefined;
      if (
        options.allParked === one ||
        (one && (options.tenant === undefined || options.paymentId === undefined))
      )
        throw new OperatorError(
          'give --tenant and --payment-id, or --all-parked (with --since, if you like)',
        );
      if (options.since !== undefined && !options.allParked)
        throw new OperatorError('--since goes with --all-parked');
      await withStore(options, async (store) => {
        const deps = { parked: store, clock: systemClock };
        if (options.tenant !== undefined && options.paymentId !== undefined) {
          await unparkCreditTransfer(deps, options.tenant, options.paymentId);
          return console.log(
            `Transfer ${options.paymentId} is due again: the reconciler starts it on its next run (5 minutes on a stage)`,
          );
        }
        const report = await unparkCreditTransfers(deps, options.since);
        console.log(
          `${report.retried} parked transfer(s) due again: the reconciler starts them on its next run (5 minutes on a stage)` +
            (report.older > 0 ? `; ${report.older} parked before --since left parked` : '') +
            (report.moved > 0 ? `; ${report.moved} moved meanwhile, left as they are` : ''),
        );
      });
    },
  );

  transferOptions(
    program
      .command('reject')
      .description(
        `Reject a parked transfer (statusReason ${OPERATOR_REJECTION_REASON}); its client is told by the status event`,
      )
      .option(
        '--not-in-clearing',
        'for a transfer submitted to clearing: the bank confirmed clearing does not have it (or recalled it)',
        false,
      ),
  ).action(async (options: TargetOptions & { tenant: string; paymentId: string; notInClearing: boolean }) => {
    await withStore(options, async (store, actor) => {
      const rejected = await rejectParkedCreditTransfer(
        { store, clock: systemClock },
        { tenant: options.tenant, paymentId: options.paymentId, actor, notInClearing: options.notInClearing },
      );
      console.log(
        `Rejected transfer ${rejected.paymentId} (statusReason ${rejected.statusReason}); its status event goes out on the reconciler's next run`,
      );
    });
  });

  return program;
};

/** Runs the command line; every failure is one line on stderr and exit code 1 (2 for usage). */
export const runTransfers = async (argv: readonly string[]): Promise<void> => {
  const program = transfersProgram();
  program.exitOverride();
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    const exitCode = (error as { exitCode?: number }).exitCode;
    if (typeof exitCode === 'number' && (error as { code?: string }).code?.startsWith('commander.')) {
      process.exit(exitCode === 0 ? 0 : 2);
    }
    console.error(`transfers: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
};

// Run as a command, not when a test imports it.
if (import.meta.main) {
  await runTransfers(process.argv.slice(2));
}
