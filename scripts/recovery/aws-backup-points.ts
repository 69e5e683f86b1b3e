import {
  type BackupClient,
  DescribeRestoreJobCommand,
  GetRecoveryPointRestoreMetadataCommand,
  paginateListRecoveryPointsByBackupVault,
  StartRestoreJobCommand,
} from '@aws-sdk/client-backup';
import type { RecoveryPoint, RecoveryPoints } from './restore-drill.ts';

/** How often a restore job is asked about: DynamoDB restores take minutes to hours. */
const POLL_MS = 15_000;

/** AWS Backup for the drill: the newest completed recovery point of the stage's vault, and its restore. */
export class AwsBackupRecoveryPoints implements RecoveryPoints {
  constructor(
    private readonly backup: BackupClient,
    private readonly options: {
      readonly vaultName: string;
      /** A role AWS Backup may assume to restore (AWSBackupServiceRolePolicyForRestores). */
      readonly restoreRoleArn: string;
      readonly pollMs?: number;
      readonly log?: (line: string) => void;
    },
  ) {}

  async latest(): Promise<RecoveryPoint> {
    let newest: RecoveryPoint | undefined;
    for await (const page of paginateListRecoveryPointsByBackupVault(
      { client: this.backup },
      { BackupVaultName: this.options.vaultName, ByResourceType: 'DynamoDB' },
    )) {
      for (const point of page.RecoveryPoints ?? []) {
        if (point.Status !== 'COMPLETED' || !point.RecoveryPointArn || !point.CreationDate) continue;
        if (newest !== undefined && point.CreationDate <= newest.createdAt) continue;
        const sourceTable = point.ResourceArn?.split(':table/')[1];
        if (sourceTable === undefined) continue;
        newest = { id: point.RecoveryPointArn, createdAt: point.CreationDate, sourceTable };
      }
    }
    if (newest === undefined) {
      throw new Error(`The vault ${this.options.vaultName} holds no completed recovery point of a table`);
    }
    return newest;
  }

  async restore(point: RecoveryPoint, targetTable: string): Promise<void> {
    const { RestoreMetadata } = await this.backup.send(
      new GetRecoveryPointRestoreMetadataCommand({
        BackupVaultName: this.options.vaultName,
        RecoveryPointArn: point.id,
      }),
    );
    const { RestoreJobId } = await this.backup.send(
      new StartRestoreJobCommand({
        RecoveryPointArn: point.id,
        IamRoleArn: this.options.restoreRoleArn,
        ResourceType: 'DynamoDB',
        // As the backup was taken (encryption included), into the scratch table.
        Metadata: { ...RestoreMetadata, targetTableName: targetTable },
      }),
    );
    this.options.log?.(`Restore job ${RestoreJobId} started into ${targetTable}`);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs ?? POLL_MS));
      const job = await this.backup.send(new DescribeRestoreJobCommand({ RestoreJobId }));
      if (job.Status === 'COMPLETED') return;
      if (job.Status === 'FAILED' || job.Status === 'ABORTED') {
        throw new Error(
          `Restore job ${RestoreJobId} ${job.Status}: ${job.StatusMessage ?? 'no reason given'}`,
        );
      }
    }
  }
}
