import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Command } from 'commander';
import { copyTable } from './recovery/table-copy.ts';

/**
 * `npm run table:copy -- --from <restored table> --to <stage's table> [--region r]`: copies every
 * item of a table restored from a backup or a point in time into the table of a stage (the stack
 * always owns its table, so a restore lands beside it and is copied in), never moving an item back
 * in time (scripts/recovery/table-copy.ts): items the target holds in a newer or the same state are
 * kept and counted. Items only the target has are left as they are.
 */
const program = new Command('table:copy')
  .requiredOption('--from <table>', 'the restored table')
  .requiredOption('--to <table>', "the stage's table (TableName output)")
  .option('--region <region>', 'AWS region of both tables (default: AWS_REGION)')
  .parse();
const { from, to, region } = program.opts<{ from: string; to: string; region?: string }>();

// Throttled puts are retried by the SDK, with backoff, before the copy gives up.
const client = new DynamoDBClient({ maxAttempts: 10, ...(region !== undefined && { region }) });
const { copied, kept } = await copyTable(client, { from, to });
console.log(`Copied ${copied} items from ${from} to ${to}`);
// Most are items nothing changed; the rest changed after the recovery point and are newer.
console.log(`Kept ${kept.length} items ${to} holds in the same or a newer state`);
