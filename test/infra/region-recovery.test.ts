import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { stageConfig } from '../../lib/stage-config.ts';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesized } from './synth.ts';
import { type Resource, resourcesOf } from './template-queries.ts';

/**
 * Recovery from the loss of a region. `-c tableReplica=true`: a global table replica in the backup
 * region, added to the table that is there (the table holds every payment: turning the option on
 * must not replace it). On `prod`, by default: both vaults locked, failed backup and copy jobs alarmed.
 */
const BACKUP_REGION = 'eu-central-1';
/** go-live.test.ts's "prod full" stage (customer managed table key, backup region), shared with it. */
const PROD_FULL = {
  stage: 'prod',
  account: '123456789012',
  keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
  region: 'eu-west-1',
  connectorUrl: 'https://connector.clearing.example',
  alarmEmail: 'payments-oncall@bank.example',
  domainName: 'payments.bank.example',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c',
  backupRegion: BACKUP_REGION,
};

let without: Synthesized;
let withReplica: Synthesized;

beforeAll(async () => {
  [without, withReplica] = await synthesized(PROD_FULL, { ...PROD_FULL, tableReplica: 'true' });
}, SYNTH_TIMEOUT_MS);

const tableOf = (template: Template): [string, Resource] => {
  const tables = [...resourcesOf(template, 'AWS::DynamoDB::Table')];
  expect(tables).toHaveLength(1);
  return tables[0] as [string, Resource];
};

/** A custom resource's call as written (Fn::Join of text and `{ Ref }`s), each Ref as `<id>`. */
const callOf = (value: unknown): { action?: string; parameters?: Record<string, unknown> } => {
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  const text =
    typeof value === 'string'
      ? value
      : (join?.[1] ?? [])
          .map((part) => (typeof part === 'string' ? part : `<${(part as { Ref?: string }).Ref ?? '?'}>`))
          .join('');
  return text === '' ? {} : JSON.parse(text);
};

interface ReplicaCall {
  readonly tableName: unknown;
  readonly create: { RegionName?: string; KMSMasterKeyId?: string };
  readonly onDelete: unknown;
}

/** The custom resources that call DynamoDB's UpdateTable to add a replica. */
const replicaCalls = (template: Template): ReplicaCall[] =>
  [...resourcesOf(template, 'Custom::AWS').values()].flatMap((resource) => {
    const call = callOf(resource.Properties.Create ?? '');
    const updates = call.parameters?.ReplicaUpdates as { Create?: ReplicaCall['create'] }[] | undefined;
    if (call.action !== 'updateTable' || updates?.[0]?.Create === undefined) return [];
    return [
      {
        tableName: call.parameters?.TableName,
        create: updates[0].Create,
        onDelete: resource.Properties.Delete,
      },
    ];
  });

describe('the table replica in the backup region', () => {
  it('keeps the very same table: logical id, type, retention; only its stream is added', () => {
    const [idBefore, before] = tableOf(without.template);
    const [idAfter, after] = tableOf(withReplica.template);
    expect(idAfter).toBe(idBefore);
    expect(after.Type).toBe('AWS::DynamoDB::Table');
    for (const table of [before, after]) {
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
      expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    }
    // Every other property as it was: none of them can replace the table.
    const { StreamSpecification, ...rest } = after.Properties;
    expect(rest).toEqual(before.Properties);
    expect(before.Properties.StreamSpecification).toBeUndefined();
    expect(StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('adds the replica only with the option, encrypted by a key of its region as the table is', () => {
    expect(replicaCalls(without.template)).toEqual([]);
    const calls = replicaCalls(withReplica.template);
    expect(calls).toHaveLength(1);
    const [tableId] = tableOf(withReplica.template);
    expect(calls[0]?.tableName).toBe(`<${tableId}>`);
    // In the backup region, under a key of that region: the one the recovery stack names so.
    expect(calls[0]?.create).toEqual({
      RegionName: BACKUP_REGION,
      KMSMasterKeyId: `arn:<AWS::Partition>:kms:${BACKUP_REGION}:<AWS::AccountId>:alias/CreditTransfers-prod-table-replica`,
    });
    // Created once, never removed by a deployment: no call on delete.
    expect(calls[0]?.onDelete).toBeUndefined();

    const recovery = withReplica.recoveryTemplate as Template;
    const aliases = [...resourcesOf(recovery, 'AWS::KMS::Alias').values()];
    expect(aliases.map((alias) => alias.Properties.AliasName)).toEqual([
      'alias/CreditTransfers-prod-table-replica',
    ]);
    const keys = [...resourcesOf(recovery, 'AWS::KMS::Key').values()];
    expect(keys.filter((key) => key.DeletionPolicy === 'Retain')).toHaveLength(keys.length);
    expect([...resourcesOf(without.recoveryTemplate as Template, 'AWS::KMS::Alias')]).toEqual([]);
  });

  it('files a ticket when the replica falls more than a minute behind', () => {
    const lagAlarms = (template: Template) =>
      [...resourcesOf(template, 'AWS::CloudWatch::Alarm')].filter(([id]) =>
        id.startsWith('MonitoringTableReplicationLag'),
      );
    expect(lagAlarms(without.template)).toEqual([]);
    const [alarm] = lagAlarms(withReplica.template);
    const properties = JSON.stringify(alarm?.[1].Properties);
    expect(properties).toContain('ReplicationLatency');
    expect(properties).toContain(`"ReceivingRegion"`);
    expect(properties).toContain('latency > 60000');
    expect(JSON.stringify(alarm?.[1].Properties.AlarmActions)).toContain('MonitoringTicketTopic');
  });

  it('has no unacknowledged cdk-nag or Control Tower finding', () => {
    expect(withReplica.nagFindings).toEqual([]);
    expect(withReplica.guardFindings).toEqual([]);
  });

  it('refuses the option without a backup region, or with a value other than true or false', () => {
    expect(() => stageConfig((name) => ({ tableReplica: 'true' })[name])).toThrow(
      /tableReplica=true needs -c backupRegion/,
    );
    expect(() => stageConfig((name) => ({ tableReplica: 'yes', backupRegion: BACKUP_REGION })[name])).toThrow(
      /tableReplica must be true or false/,
    );
  });
});

describe('backups on prod, by default', () => {
  it('locks both vaults in governance mode: the stage vault and the copy vault of the backup region', () => {
    for (const template of [without.template, without.recoveryTemplate as Template]) {
      const vaults = [...resourcesOf(template, 'AWS::Backup::BackupVault').values()];
      expect(vaults).toHaveLength(1);
      // Governance: no ChangeableForDays (compliance mode sets it).
      expect(vaults[0]?.Properties.LockConfiguration).toEqual({ MinRetentionDays: 35 });
    }
  });

  it('files a ticket when a backup or a copy job fails', () => {
    const alarms = [...resourcesOf(without.template, 'AWS::CloudWatch::Alarm')];
    for (const name of ['BackupJobsFailed', 'BackupCopyJobsFailed']) {
      const alarm = alarms.filter(([id]) => id.startsWith(`Monitoring${name}`));
      expect(alarm, name).toHaveLength(1);
      expect(JSON.stringify(alarm[0]?.[1].Properties), name).toContain('AWS/Backup');
      expect(JSON.stringify(alarm[0]?.[1].Properties.AlarmActions), name).toContain('MonitoringTicketTopic');
    }
  });
});
