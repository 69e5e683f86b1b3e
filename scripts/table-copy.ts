import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Command } from 'commander';

/**
 * `npm run table:copy -- --from <restored table> --to <stage's table> [--region r]`: copies every
 * item of a table restored from a backup or a point in time into the table of a stage (the
 * stack always owns its table, so a restore lands beside it and is copied in). Items of the
 * target with the same key are overwritten; items only the target has are left as they are.
 * Four scan segments in parallel, 25 items a write, unprocessed items retried with backoff.
 */
const SEGMENTS = 4;

const program = new Command('table:copy')
  .requiredOption('--from <table>', 'the restored table')
  .requiredOption('--to <table>', "the stage's table (TableName output)")
  .option('--region <region>', 'AWS region of both tables (default: AWS_REGION)')
  .parse();
const { from, to, region } = program.opts<{ from: string; to: string; region?: string }>();
if (from === to) throw new Error('--from and --to name the same table');

const client = DynamoDBDocumentClient.from(new DynamoDBClient(region === undefined ? {} : { region }));
const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

const write = async (items: Record<string, unknown>[]): Promise<void> => {
  let requests = items.map((Item) => ({ PutRequest: { Item } }));
  for (let attempt = 0; requests.length > 0; attempt += 1) {
    if (attempt > 10) throw new Error(`${requests.length} items still unprocessed after 10 retries`);
    if (attempt > 0) await pause(Math.min(100 * 2 ** attempt, 5000));
    const { UnprocessedItems } = await client.send(
      new BatchWriteCommand({ RequestItems: { [to]: requests } }),
    );
    requests = (UnprocessedItems?.[to] ?? []) as typeof requests;
  }
};

let copied = 0;
const copySegment = async (segment: number): Promise<void> => {
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: from,
        Segment: segment,
        TotalSegments: SEGMENTS,
        ExclusiveStartKey,
        ConsistentRead: true,
      }),
    );
    const items = page.Items ?? [];
    for (let i = 0; i < items.length; i += 25) await write(items.slice(i, i + 25));
    copied += items.length;
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
};

await Promise.all(Array.from({ length: SEGMENTS }, (_, segment) => copySegment(segment)));
console.log(`Copied ${copied} items from ${from} to ${to}`);
