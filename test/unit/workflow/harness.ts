import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { documentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbLifecycleStore } from '#adapters/credit-transfers/credit-transfer-lifecycle-store';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import { announcement } from '#adapters/credit-transfers/pending-announcer';
import { sandboxClearingKey } from '#adapters/table/keys';
import { createTableInput } from '#adapters/table/table-definition';
import { systemClock } from '#domain/commons/ports';
import { initiateCreditTransfer } from '#domain/credit-transfers/initiate-credit-transfer';
import type { CreditTransferRecord, PendingAnnouncer, WorkflowStarter } from '#domain/credit-transfers/ports';
import type { PendingApproval } from '#domain/payment-controls/approval';
import { createDynamoDbClient } from '#local/table';
import {
  type ExecutionSummary,
  LocalWorkflowRunner,
  type LocalWorkflowRunnerOptions,
} from '../../../scripts/local/workflow-runner.ts';

const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => import('node:net').Server;

export const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const TABLE = 'lifecycle-unit';
export const TENANT = 'tenant-a';
export const CLIENT = 'client-a';

/** Task states of both ASL files, for retry overrides. */
export const TASK_STATES = [
  'ValidateCheckAndSubmit',
  'PublishBeforeHandOver',
  'HandOverToLongWaits',
  'SubmitToClearing',
  'PublishSubmission',
  'PollClearing',
  'PublishOutcome',
  'ParkIfExhausted',
];

/**
 * An in-memory dynalite with the service's table, and the environment the workflow handlers
 * read on first use. Settlement is immediate; `-hold` transfers stay pending for 300 s. Clearing
 * polls wait 0 s, so the Wait state reads its real SecondsPath without slowing the tests.
 */
export const startWorkflowEnvironment = async () => {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'lifecycle-unit-'));
  Object.assign(process.env, {
    AWS_REGION: 'local',
    TABLE_NAME: TABLE,
    DYNAMODB_ENDPOINT: endpoint,
    EVENTS_FILE: join(dataDir, 'events.jsonl'),
    SANDBOX_SETTLEMENT_SECONDS: '0',
    SANDBOX_HOLD_SECONDS: '300',
    CLEARING_POLL_INITIAL_SECONDS: '0',
    CLEARING_POLL_MAX_ATTEMPTS: '4',
    SUBMISSION_LEASE_SECONDS: '1',
  });
  await createDynamoDbClient(endpoint).send(new CreateTableCommand(createTableInput(TABLE)));
  return {
    endpoint,
    dataDir,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};

/**
 * The ASL runner with the real handlers, short retries, and every execution recorded. Only the
 * value-date hold is shortened: WaitForClearing reads `$.waitSeconds` as on AWS, so a step output
 * without it fails the execution here too.
 */
export const startRunner = async (options: Partial<LocalWorkflowRunnerOptions> = {}) => {
  const executions: ExecutionSummary[] = [];
  const runner = await LocalWorkflowRunner.create({
    projectRoot: PROJECT_ROOT,
    waitTimeOverrides: { HoldUntilValueDate: 20 },
    retryIntervalOverrides: Object.fromEntries(TASK_STATES.map((state) => [state, 5])),
    onExecution: (summary) => executions.push(summary),
    ...options,
  });
  return { runner, executions };
};

/**
 * The publish step's function as its asynchronous invocation runs it (the payload the announcer
 * sends), in-process and awaited: a held transfer's changes published with no execution.
 */
export const publishingAnnouncer: PendingAnnouncer = {
  announce: async (transfer) => {
    const { handler } = await import('#workflow/publish-status-events');
    await handler(announcement(transfer));
  },
};

export const lifecycleStore = () => new DynamoDbLifecycleStore(documentClient(), TABLE);

export const initiate = async (
  workflow: WorkflowStarter | undefined,
  overrides: Record<string, unknown> = {},
  tenant = TENANT,
  /** The approval the tenant's controls hold the transfer for, if any. */
  approval?: PendingApproval,
): Promise<string> => {
  const { creditTransfer } = await initiateCreditTransfer(
    {
      store: new DynamoDbCreditTransferStore(documentClient(), TABLE),
      clock: systemClock,
      workflow,
      ...(approval !== undefined && { controls: async () => ({ approval }) }),
    },
    {
      tenant,
      clientId: CLIENT,
      body: { paymentMethod: 'CreditTransfer', amount: '10.00', debtorAccountId: 'acc-001', ...overrides },
      servicer: {},
    },
  );
  return creditTransfer.paymentId;
};

export const stored = async (paymentId: string, tenant = TENANT): Promise<CreditTransferRecord> => {
  const record = await lifecycleStore().get(tenant, paymentId);
  if (!record) throw new Error(`no transfer ${paymentId}`);
  return record;
};

export const statusesOf = (record: CreditTransferRecord): string[] =>
  record.history.map((entry) => entry.status);

/**
 * How long a wait may take before it fails: far above what a step takes even on a loaded
 * machine (what is waited for either happens at once or never does).
 */
const WAIT_MS = 30_000;

/** Waits until the transfer reaches `status` (polling the table), or fails after `timeoutMs`. */
export const reach = async (
  paymentId: string,
  status: string,
  timeoutMs = WAIT_MS,
): Promise<CreditTransferRecord> => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const record = await stored(paymentId);
    if (record.status === status) return record;
    if (Date.now() > until) throw new Error(`${paymentId} stayed ${record.status}, expected ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

export interface PublishedEvent {
  id: string;
  'detail-type': string;
  detail: {
    eventId: string;
    paymentId: string;
    sequence: number;
    status: string;
    previousStatus?: string;
    statusReason?: string;
  };
}

export const publishedEvents = async (paymentId: string): Promise<PublishedEvent[]> => {
  const text = await readFile(process.env.EVENTS_FILE as string, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as PublishedEvent)
    .filter((event) => event.detail.paymentId === paymentId);
};

export const executionsOf = (executions: ExecutionSummary[], paymentId: string) =>
  executions.filter((execution) => execution.paymentId === paymentId);

/** Sandbox clearing's own record of the payment, or undefined when it was never submitted. */
export const clearingRecord = async (paymentId: string): Promise<Record<string, unknown> | undefined> =>
  (
    await documentClient().get({
      TableName: TABLE,
      Key: sandboxClearingKey(TENANT, paymentId),
      ConsistentRead: true,
    })
  ).Item;

/** Resolves once `done` holds (checked every 5 ms), or fails after `timeoutMs`. */
export const eventually = async (
  done: () => boolean | Promise<boolean>,
  timeoutMs = WAIT_MS,
): Promise<void> => {
  const until = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`not done after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};
