import { Aws, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  BackupPlan,
  BackupPlanRule,
  BackupResource,
  BackupVault,
  type BackupVaultProps,
  type IBackupVault,
} from 'aws-cdk-lib/aws-backup';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { BackupConfig } from '../operations-config.ts';
import { DATA_KEY_ACTIONS, keyPolicy } from './key-policy.ts';

/** What AWS Backup does with a vault's key on the account's behalf: nothing else may use it. */
const BACKUP_KEY_USE = {
  actions: DATA_KEY_ACTIONS,
  services: ['backup'],
} as const;

/**
 * A backup vault under a customer managed key of its own (an AWS managed key cannot be shared,
 * so its backups could never be copied to another account), retained with its recovery points
 * when the stack goes, locked when asked.
 */
export const backupVault = (
  scope: Construct,
  id: string,
  props: { readonly name: string; readonly description: string; readonly config: BackupConfig },
): BackupVault => {
  const key = new Key(scope, `${id}Key`, {
    description: props.description,
    enableKeyRotation: true,
    // Without it no backup in the vault can be read.
    removalPolicy: RemovalPolicy.RETAIN,
    pendingWindow: Duration.days(30),
    policy: keyPolicy(scope, { throughServices: BACKUP_KEY_USE }),
  });
  const lock: Pick<BackupVaultProps, 'lockConfiguration'> =
    props.config.vaultLock === undefined
      ? {}
      : {
          lockConfiguration: {
            minRetention: Duration.days(props.config.retentionDays),
            // Compliance mode: after these 3 days nobody, root included, can lift the lock.
            ...(props.config.vaultLock === 'compliance' && { changeableFor: Duration.days(3) }),
          },
        };
  return new BackupVault(scope, id, {
    backupVaultName: props.name,
    encryptionKey: key,
    removalPolicy: RemovalPolicy.RETAIN,
    ...lock,
  });
};

/** The name of the vault the recovery stack keeps in the backup region (lib/recovery-stack.ts). */
export const copyVaultNameOf = (stackName: string): string => `${stackName}-copy`;

export interface TableBackupProps {
  readonly table: ITable;
  /** Names the vault and the plan, unique per stage. */
  readonly name: string;
  readonly config: BackupConfig;
}

/**
 * A daily AWS Backup of the table beside its point-in-time recovery, kept `retentionDays`, and
 * copied to the backup region's vault and to another account's vault when those are set: the
 * copies survive the loss of this region, or of this account.
 */
export class TableBackup extends Construct {
  readonly vault: BackupVault;
  readonly plan: BackupPlan;
  /** The vaults every backup is copied to. */
  readonly copyVaults: IBackupVault[] = [];

  constructor(scope: Construct, id: string, props: TableBackupProps) {
    super(scope, id);
    const { config } = props;
    this.vault = backupVault(this, 'Vault', {
      name: props.name,
      description: `Encrypts the backups of ${props.name}`,
      config,
    });

    if (config.copyRegion !== undefined) {
      this.copyVaults.push(
        BackupVault.fromBackupVaultArn(
          this,
          'RegionCopyVault',
          `arn:${Aws.PARTITION}:backup:${config.copyRegion}:${Aws.ACCOUNT_ID}:backup-vault:${copyVaultNameOf(props.name)}`,
        ),
      );
    }
    if (config.copyVaultArn !== undefined) {
      this.copyVaults.push(BackupVault.fromBackupVaultArn(this, 'AccountCopyVault', config.copyVaultArn));
    }

    const retention = Duration.days(config.retentionDays);
    this.plan = new BackupPlan(this, 'Plan', { backupPlanName: props.name, backupVault: this.vault });
    this.plan.addRule(
      new BackupPlanRule({
        ruleName: 'Daily',
        // 03:00 UTC, outside European and American business hours.
        scheduleExpression: Schedule.cron({ hour: '3', minute: '0' }),
        startWindow: Duration.hours(1),
        completionWindow: Duration.hours(8),
        deleteAfter: retention,
        copyActions: this.copyVaults.map((vault) => ({
          destinationBackupVault: vault,
          deleteAfter: retention,
        })),
      }),
    );
    const selection = this.plan.addSelection('Table', {
      resources: [BackupResource.fromDynamoDbTable(props.table)],
    });
    Validations.of(selection).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
      reason:
        "AWS Backup's documented service role policy for backup jobs; the role can be assumed by AWS Backup only and the plan selects this table only.",
    });
  }
}
