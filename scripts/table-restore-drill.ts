import { resolve } from 'node:path';
import { BackupClient } from '@aws-sdk/client-backup';
import { DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { Command, InvalidArgumentError } from 'commander';
import { dataFolderFiles } from '#local/data-folder';
import { createDynamoDbClient } from '#local/table';
import { AwsBackupRecoveryPoints } from './recovery/aws-backup-points.ts';
import { DynamoDbDrillTables, TableCopyRecoveryPoints } from './recovery/drill-tables.ts';
import {
  type DrillReport,
  type RecoveryPoints,
  RestoreDrillFailedError,
  runRestoreDrill,
} from './recovery/restore-drill.ts';

/**
 * `npm run table:restore-drill`: restores the newest recovery point of a stage's backup vault into
 * a scratch table, compares it with the live table (item counts by kind, a sample of settled
 * payments field by field), prints the result and how long the restore took, and deletes the
 * scratch table, on failure too. It reads the live table and never writes to it.
 * docs/operations.md, "Restore drill".
 */
interface Options {
  stage?: string;
  local: boolean;
  restoreRoleArn?: string;
  region?: string;
  vault?: string;
  table?: string;
  scratchTable?: string;
  sample: number;
}

const positiveWhole = (value: string): number => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 10_000)
    throw new InvalidArgumentError('give a whole number from 1 to 10000');
  return number;
};

const program = new Command('table:restore-drill')
  .description(
    'Restore the newest backup of a stage into a scratch table, compare it with the live table, delete it',
  )
  .option('--stage <stage>', 'the stage: its vault is CreditTransfers-<stage>')
  .option('--local', "the local service's table (DATA_DIR), copied as the recovery point", false)
  .option('--restore-role-arn <arn>', 'with --stage: a role AWS Backup may assume to restore')
  .option('--region <region>', 'with --stage: the region of the vault and the tables (default: AWS_REGION)')
  .option(
    '--vault <name>',
    "with --stage: another vault (the backup region's is CreditTransfers-<stage>-copy)",
  )
  .option('--table <name>', 'the live table to compare with (default: the table the backup was taken of)')
  .option(
    '--scratch-table <name>',
    'the table restored into and deleted after (default: <live table>-drill-<time>)',
  )
  .option('--sample <n>', 'settled payments compared field by field', positiveWhole, 100)
  .showSuggestionAfterError()
  .parse();
const options = program.opts<Options>();

const fail = (message: string): never => {
  console.error(`table:restore-drill: ${message}`);
  process.exit(1);
};

let client: DynamoDBClient;
let points: RecoveryPoints;
if (options.local) {
  if (options.stage !== undefined) fail('--local and --stage exclude each other');
  const dataDir = resolve(process.env.DATA_DIR || '.local-data');
  client = createDynamoDbClient({
    socket: process.env.DYNAMODB_SOCKET || dataFolderFiles(dataDir).tableSocket,
  });
  points = new TableCopyRecoveryPoints(
    client,
    options.table ?? (process.env.TABLE_NAME || 'credit-transfers'),
  );
} else {
  if (options.stage === undefined) fail('name a stage (--stage dev) or --local');
  if (options.restoreRoleArn === undefined) fail('--restore-role-arn is needed to restore on a stage');
  const region = options.region === undefined ? {} : { region: options.region };
  client = new DynamoDBClient(region);
  const backup = new AwsBackupRecoveryPoints(new BackupClient(region), {
    vaultName: options.vault ?? `CreditTransfers-${options.stage}`,
    restoreRoleArn: options.restoreRoleArn as string,
    log: (line) => console.log(line),
  });
  points = {
    latest: () => backup.latest(),
    restore: async (point, target) => {
      await backup.restore(point, target);
      await waitUntilTableExists({ client, maxWaitTime: 3600 }, { TableName: target });
    },
  };
}

const print = (report: DrillReport): void => {
  console.log(`Recovery point ${report.recoveryPoint.id} of ${report.recoveryPoint.createdAt.toISOString()}`);
  console.log(
    `Restored into ${report.scratchTable} in ${report.restoreSeconds.toFixed(0)} s (the restore part of the RTO)`,
  );
  console.log('kind of item'.padEnd(24), 'restored'.padStart(10), 'live'.padStart(10));
  for (const { kind, restored, live } of report.counts) {
    console.log(kind.padEnd(24), String(restored).padStart(10), String(live).padStart(10));
  }
  console.log(`${report.sampled} payments compared field by field with ${report.liveTable}`);
};

try {
  const report = await runRestoreDrill(points, new DynamoDbDrillTables(client), {
    ...(options.table !== undefined && { liveTable: options.table }),
    ...(options.scratchTable !== undefined && { scratchTable: options.scratchTable }),
    sampleSize: options.sample,
    exact: false,
  });
  print(report);
  console.log('Restore drill passed; the scratch table is deleted');
} catch (error) {
  if (error instanceof RestoreDrillFailedError) {
    print(error.report);
    for (const problem of error.report.problems) console.error(`  ${problem}`);
    fail('FAILED: the restored table does not match the live one (the scratch table is deleted)');
  }
  fail(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
} finally {
  client.destroy();
}
