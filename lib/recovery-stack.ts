import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { backupVault, copyVaultNameOf } from './constructs/table-backup.ts';
import type { BackupConfig } from './operations-config.ts';

export interface RecoveryStackProps extends StackProps {
  /** The stage's stack: the vault here is named after it. */
  readonly primaryStackName: string;
  readonly backup: BackupConfig;
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
  }
}
