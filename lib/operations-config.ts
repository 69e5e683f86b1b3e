import { batchStartSeconds } from '#domain/iso20022/start-batch-lifecycles';
import {
  BATCH_START_MAX_SECONDS,
  MAX_BATCH_TRANSACTIONS,
  MIN_BATCH_STARTS_PER_SECOND,
} from '#domain/iso20022/submit-batch';
import { ROUTES } from '#routes';
import { wholeNumber } from '#shared/config';
import { WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { batchStartsPerSecond, PRODUCTION_CONCURRENCY_INPUTS, reservedConcurrencyOf } from './concurrency.ts';

/**
 * The stage's settings for going live (recovery, alarms' subscribers, concurrency, client
 * certificates), read from CDK context beside lib/stage-config.ts. Each refusal is one line
 * naming the context value to fix. docs/operations.md lists them with their defaults.
 */

/** The function groups that get a reserved concurrency of their own, each function of a group alike. */
export const FUNCTION_GROUPS = ['authorizer', 'api', 'public', 'workflow', 'reconciler', 'parking'] as const;
export type FunctionGroup = (typeof FUNCTION_GROUPS)[number];

/**
 * Reserved concurrency per function of each group on `prod`: the formula of lib/concurrency.ts
 * over its documented inputs (docs/operations.md "Concurrency").
 */
export const PRODUCTION_RESERVED_CONCURRENCY: Readonly<Record<FunctionGroup, number>> = reservedConcurrencyOf(
  PRODUCTION_CONCURRENCY_INPUTS,
);

/**
 * How many functions each group has (lib/credit-transfer-stack.ts assigns them): the authorizer;
 * a function per authenticated route; one per public route; the workflow's steps but the
 * catch-all, the batch start and the two webhook functions; the reconciler; the catch-all.
 */
export const FUNCTIONS_PER_GROUP: Readonly<Record<FunctionGroup, number>> = {
  authorizer: 1,
  api: ROUTES.filter((route) => route.scope !== undefined).length,
  public: ROUTES.filter((route) => route.scope === undefined).length,
  workflow: Object.keys(WORKFLOW_FUNCTIONS).length - 1 + 3,
  reconciler: 1,
  parking: 1,
};

/** The executions a stage reserves, all its functions together. */
export const reservedConcurrencyTotal = (
  reserved: Readonly<Partial<Record<FunctionGroup, number>>>,
): number =>
  FUNCTION_GROUPS.reduce((sum, group) => sum + (reserved[group] ?? 0) * FUNCTIONS_PER_GROUP[group], 0);

export type VaultLock = 'governance' | 'compliance';

export interface BackupConfig {
  /** Days the daily backups, and their copies, are kept. */
  readonly retentionDays: number;
  /** A second region the backups are copied to (a vault of the recovery stack there). */
  readonly copyRegion?: string;
  /** Another account's backup vault the backups are copied to as well. */
  readonly copyVaultArn?: string;
  /** A vault lock on this stage's vaults: `governance` (removable with permission) or `compliance` (never). */
  readonly vaultLock?: VaultLock;
  /**
   * A DynamoDB global table replica of the table in `copyRegion` (`-c tableReplica=true`): the
   * recovery point for a lost region becomes seconds instead of a day (docs/operations.md).
   */
  readonly tableReplica: boolean;
}

export interface OperationsConfig {
  /** An existing SNS topic the paging alarms notify as well (a team's paging topic). */
  readonly alarmTopicArn?: string;
  /** An existing SNS topic the ticket alarms notify as well. */
  readonly ticketTopicArn?: string;
  /** Subscribed to the ticket topic. */
  readonly ticketEmail?: string;
  /**
   * The example status-event consumer queue (a demonstration for integrators): not on `prod`,
   * where nobody reads it and its oldest-message alarm would fire after go-live.
   */
  readonly exampleConsumer: boolean;
  readonly backup: BackupConfig;
  /** Reserved concurrency per function of each group; none for a group left out. */
  readonly reservedConcurrency: Readonly<Partial<Record<FunctionGroup, number>>>;
  /**
   * Lifecycle starts per second of a batch: the formula over the workflow functions' reservation
   * (prod's when the stage reserves none, the account's unreserved pool being no larger a promise).
   */
  readonly batchStartsPerSecond: number;
  /** Mutual TLS on the custom domain: the truststore (PEM bundle of accepted client CAs) in S3. */
  readonly mtlsTruststore?: { readonly bucket: string; readonly key: string; readonly version?: string };
}

export interface OperationsContext {
  readonly text: (name: string) => string | undefined;
  readonly stage: string;
  readonly production: boolean;
  readonly alarmEmail?: string;
  readonly customDomain: boolean;
}

export const operationsConfig = ({
  text,
  stage,
  production,
  alarmEmail,
  customDomain,
}: OperationsContext): OperationsConfig => {
  const topicArn = (name: string): string | undefined => {
    const arn = text(name);
    if (arn !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/.test(arn)) {
      throw new Error(`Context ${name} must be an SNS topic ARN; got ${arn}`);
    }
    return arn;
  };
  const alarmTopicArn = topicArn('alarmTopicArn');
  const ticketTopicArn = topicArn('ticketTopicArn');
  const ticketEmail = text('ticketEmail');
  if (ticketEmail !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(ticketEmail)) {
    throw new Error(`Context ticketEmail must be an e-mail address; got ${ticketEmail}`);
  }
  if (production && alarmEmail === undefined && alarmTopicArn === undefined) {
    throw new Error(
      `Stage ${stage} needs someone to page: -c alarmEmail=oncall@example.com or -c alarmTopicArn=arn:aws:sns:<region>:<account>:<topic>`,
    );
  }

  const retentionDays = contextCount(
    text('backupRetentionDays') ?? (production ? '35' : '7'),
    'backupRetentionDays',
  );
  const copyRegion = text('backupRegion');
  if (copyRegion !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d$/.test(copyRegion)) {
    throw new Error(`Context backupRegion must be an AWS region such as eu-central-1; got ${copyRegion}`);
  }
  const copyVaultArn = text('backupCopyVaultArn');
  if (
    copyVaultArn !== undefined &&
    !/^arn:aws[a-z-]*:backup:[a-z0-9-]+:\d{12}:backup-vault:[A-Za-z0-9_-]{2,50}$/.test(copyVaultArn)
  ) {
    throw new Error(`Context backupCopyVaultArn must be a backup vault ARN; got ${copyVaultArn}`);
  }
  // prod's backups are locked against deletion before their retention unless told otherwise.
  const lockText = text('backupVaultLock') ?? (production ? 'governance' : 'none');
  if (lockText !== 'none' && lockText !== 'governance' && lockText !== 'compliance') {
    throw new Error(`Context backupVaultLock must be governance, compliance or none; got ${lockText}`);
  }
  const lock: VaultLock | undefined = lockText === 'none' ? undefined : lockText;
  const replicaText = text('tableReplica') ?? 'false';
  if (replicaText !== 'true' && replicaText !== 'false') {
    throw new Error(`Context tableReplica must be true or false; got ${replicaText}`);
  }
  const tableReplica = replicaText === 'true';
  if (tableReplica && copyRegion === undefined) {
    throw new Error(
      'Context tableReplica=true needs -c backupRegion=<region>: the replica lives in the backup region',
    );
  }

  const reservedConcurrency: Partial<Record<FunctionGroup, number>> = {};
  for (const group of FUNCTION_GROUPS) {
    const name = `reservedConcurrency${group.charAt(0).toUpperCase()}${group.slice(1)}`;
    const value = text(name) ?? (production ? String(PRODUCTION_RESERVED_CONCURRENCY[group]) : 'none');
    if (value !== 'none') reservedConcurrency[group] = contextCount(value, name);
  }

  const startsPerSecond = pacedBatchStarts(reservedConcurrency.workflow);

  const truststoreUri = text('mtlsTruststoreUri');
  let mtlsTruststore: OperationsConfig['mtlsTruststore'];
  if (truststoreUri !== undefined) {
    const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.+)$/.exec(truststoreUri);
    if (!match?.[1] || !match[2]) {
      throw new Error(`Context mtlsTruststoreUri must be s3://<bucket>/<key>; got ${truststoreUri}`);
    }
    if (!customDomain) {
      throw new Error(
        'Context mtlsTruststoreUri needs domainName and certificateArn: mutual TLS is a custom domain setting',
      );
    }
    const version = text('mtlsTruststoreVersion');
    mtlsTruststore = { bucket: match[1], key: match[2], ...(version !== undefined && { version }) };
  }

  const consumer = text('exampleConsumer') ?? String(!production);
  if (consumer !== 'true' && consumer !== 'false') {
    throw new Error(`Context exampleConsumer must be true or false; got ${consumer}`);
  }

  return {
    exampleConsumer: consumer === 'true',
    ...(alarmTopicArn !== undefined && { alarmTopicArn }),
    ...(ticketTopicArn !== undefined && { ticketTopicArn }),
    ...(ticketEmail !== undefined && { ticketEmail }),
    backup: {
      retentionDays,
      ...(copyRegion !== undefined && { copyRegion }),
      ...(copyVaultArn !== undefined && { copyVaultArn }),
      ...(lock !== undefined && { vaultLock: lock }),
      tableReplica,
    },
    reservedConcurrency,
    batchStartsPerSecond: startsPerSecond,
    ...(mtlsTruststore !== undefined && { mtlsTruststore }),
  };
};

/** Context values that count things or days: from 1 to 9999. */
export const contextCount = (value: string, name: string): number =>
  wholeNumber(`Context ${name}`, value, { min: 1, max: 9999 });

/**
 * The pace of a batch's lifecycle starts for a workflow reservation, refused where the largest
 * batch's starts would take longer than BATCH_START_MAX_SECONDS (within the batch start
 * function's time; a batch's transfers fall due in the recovery index by then).
 */
export const pacedBatchStarts = (
  workflowReservation: number = PRODUCTION_RESERVED_CONCURRENCY.workflow,
): number => {
  const rate = (reservation: number) => batchStartsPerSecond(PRODUCTION_CONCURRENCY_INPUTS, reservation);
  if (rate(workflowReservation) < MIN_BATCH_STARTS_PER_SECOND) {
    let enough = workflowReservation + 1;
    while (rate(enough) < MIN_BATCH_STARTS_PER_SECOND) enough += 1;
    throw new Error(
      `Context reservedConcurrencyWorkflow=${workflowReservation} paces a batch's lifecycle starts to ${rate(workflowReservation)} a second: a batch of ${MAX_BATCH_TRANSACTIONS} would take ${Math.ceil(batchStartSeconds(MAX_BATCH_TRANSACTIONS, rate(workflowReservation)))} s, more than ${BATCH_START_MAX_SECONDS} s (the batch start's time; ${MIN_BATCH_STARTS_PER_SECOND} a second at least); reserve at least ${enough} or none`,
    );
  }
  return rate(workflowReservation);
};
