import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { DATA_KEY_ACTIONS, keyPolicy } from './constructs/key-policy.ts';
import { backupVault, copyVaultNameOf } from './constructs/table-backup.ts';
import { tableReplicaKeyAliasOf } from './constructs/table-replica.ts';
import type { BackupConfig } from './operations-config.ts';

export interface RecoveryStackProps extends StackProps {
  /** The stage's stack: the vault here is named after it. */
  readonly primaryStackName: string;
  readonly backup: BackupConfig;
  /** The stage's table has a customer managed key: its replica here gets one of this region. */
  readonly tableCustomerManagedKey: boolean;
}

/**
 * What a stage keeps in its backup region (`-c backupRegion=...`), deployed there before the
 * stage's stack: the vault the daily table backups are copied to. A region lost is restored from
 * here (docs/operations.md "Recovery").
 */
export class RecoveryStack extends Stack {
  constructor(scope: Construct, id: string, props: RecoveryStackProps) {
    super(scope, id, props);
    const vault = backupVault(this, 'CopyVault', {
      name: copyVaultNameOf(props.primaryStackName),
      description: `Encrypts the copies of the ${props.primaryStackName} table backups`,
      config: props.backup,
    });
    new CfnOutput(this, 'CopyVaultName', { value: vault.backupVaultName });
    if (props.backup.tableReplica && props.tableCustomerManagedKey) {
      // The table's replica here is encrypted as the table is: by a customer managed key, of
      // this region. The stage's stack names it by its alias (lib/constructs/table-replica.ts).
      new Key(this, 'TableReplicaKey', {
        description: `Encrypts the replica of the ${props.primaryStackName} table`,
        alias: tableReplicaKeyAliasOf(props.primaryStackName),
        enableKeyRotation: true,
        // Without it the replica cannot be read.
        removalPolicy: RemovalPolicy.RETAIN,
        pendingWindow: Duration.days(30),
        policy: keyPolicy(this, {
          throughServices: {
            actions: DATA_KEY_ACTIONS,
            services: ['dynamodb'],
          },
        }),
      });
    }
  }
}
