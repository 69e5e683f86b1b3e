import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  authenticationFailuresKey,
  clientKey,
  creditTransferKey,
  eventsIndexKey,
  legacyWebhookDueShardKey,
  listCreditorAccountIdKey,
  listCreditorAccountNumberKey,
  listDebtorAccountIdKey,
  listStatusKey,
  listTenantKey,
  recoveryShardKey,
  sandboxClearingKey,
  signingKeyScheduleKey,
  WEBHOOK_DUE_QUEUES,
  webhookAttemptKey,
  webhookDeliveryKey,
  webhookDueKey,
  webhookEndpointAllocationKey,
  webhookEndpointKey,
  webhookEventKey,
} from '#adapters/table/keys';
import { RECONCILER_ENTRY, WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { ROUTES } from '../../lambdas/routes.ts';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { COMMON_RULES_COUNTED } from '../../lib/constructs/web-acl.ts';
import { KEY_PREFIXES } from '../../lib/function-bindings.ts';
import { PRODUCTION_RESERVED_CONCURRENCY } from '../../lib/operations-config.ts';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesize, synthesized } from './synth.ts';
import {
  getAttTargets,
  type Resource,
  refOf,
  resourcesOf,
  statementsOfFunction,
} from './template-queries.ts';

/**
 * What a bank's platform team checks before the service goes live (issue 16), read from the
 * synthesized templates: `dev` with defaults, `prod` on the sandbox, a full `prod`, and a stage
 * with every recovery and edge option.
 */
const ALARM_EMAIL = 'payments-oncall@bank.example';
const BACKUP_REGION = 'eu-central-1';
const DOMAIN = 'payments.bank.example';
const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c';
const COPY_VAULT_ARN = 'arn:aws:backup:eu-west-1:210987654321:backup-vault:payments-vault';
const PAGING_TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:payments-paging';
const TRUSTSTORE = 's3://bank-truststores/payments/clients.pem';
/** What every prod stage names (its account, its key administrator): synth fails without them. */
const PROD_PINNED = {
  account: '123456789012',
  keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
  region: 'eu-west-1',
};

interface PolicyStatement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const onlyOne = <T>(values: Iterable<T>, what: string): T => {
  const all = [...values];
  if (all.length !== 1) throw new Error(`Expected one ${what}, found ${all.length}`);
  return all[0] as T;
};
const actionsOf = (statement: PolicyStatement): string[] => [statement.Action].flat();
const functionsOf = (template: Template): Map<string, Resource> =>
  resourcesOf(template, 'AWS::Lambda::Function');
const descriptionOf = (fn: Resource): string => String(fn.Properties.Description ?? '');
const environmentOf = (fn: Resource): Record<string, unknown> =>
  (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};

/** The logical id prefix CDK gives the singleton function behind every AwsCustomResource. */
const AWS_CUSTOM_RESOURCE_PROVIDER = 'AWS679f53fac002430cb0da5b7982bd2287';

/** Every function by its concurrency group, from what the template says it is. */
const groupOf = (template: Template, functionId: string): keyof typeof PRODUCTION_RESERVED_CONCURRENCY => {
  const authorizer = onlyOne(resourcesOf(template, 'AWS::ApiGateway::Authorizer').values(), 'authorizer');
  if (getAttTargets(authorizer.Properties.AuthorizerUri).includes(functionId)) return 'authorizer';
  const description = descriptionOf(functionsOf(template).get(functionId) as Resource);
  if (description.startsWith('Lifecycle: drives on')) return 'reconciler';
  // The catch-all, sized for an outage (lib/concurrency.ts).
  if (description.startsWith(WORKFLOW_FUNCTIONS.parkTransfer.description)) return 'parking';
  if (Object.values(WORKFLOW_FUNCTIONS).some((fn) => description.startsWith(fn.description)))
    return 'workflow';
  const route = ROUTES.find((r) => description.startsWith(`${r.method} ${r.path}:`));
  // Public routes (no scope) have method throttles of their own and their own share.
  if (route !== undefined) return route.scope === undefined ? 'public' : 'api';
  // Webhook delivery and a batch's lifecycle starts share the workflow's share (lib/credit-transfer-stack.ts).
  if (description.startsWith('Webhooks:') || description.startsWith('Batches:')) return 'workflow';
  throw new Error(`Function ${functionId} (${description}) belongs to no group`);
};

/** A LeadingKeys pattern (StringLike: `*`, `?`) matches a partition key value? */
const likeMatches = (pattern: string, value: string): boolean =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);
const leadingKeysOf = (statement: PolicyStatement): string[] | undefined => {
  const patterns = statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
  return patterns === undefined ? undefined : [patterns as string | string[]].flat();
};
const TABLE_WRITES = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:TransactWriteItems',
];

/** The partition key values, as the adapters build them, of each kind of item. */
const PARTITIONS = {
  creditTransfer: creditTransferKey('acme', 'p-1').pk,
  listIndexes: [
    listTenantKey('acme'),
    listDebtorAccountIdKey('acme', 'a-1'),
    listCreditorAccountIdKey('acme', 'a-2'),
    listCreditorAccountNumberKey('acme', '12345678'),
    listStatusKey('acme', 'AcceptedSettlementCompleted'),
  ],
  client: clientKey('acme-erp').pk,
  throttle: authenticationFailuresKey({ clientId: 'acme-erp', sourceAddress: '192.0.2.1' }).pk,
  recovery: recoveryShardKey(3),
  sandboxClearing: sandboxClearingKey('acme', 'p-1').pk,
  signingKeys: signingKeyScheduleKey().pk,
  /** The endpoints with their sealed secrets, and the tenant's endpoint allocation. */
  webhookEndpoints: [webhookEndpointKey('acme', 'e-1').pk, webhookEndpointAllocationKey('acme').pk],
  /** The events and the events index partition. */
  events: [webhookEventKey('acme', 'ev-1').pk, eventsIndexKey('acme')],
  /** The deliveries and their attempts. */
  deliveries: [
    webhookDeliveryKey('acme', 'e-1', 'ev-1').pk,
    webhookAttemptKey('acme', 'e-1', '2026-01-01T00:00:00.000Z', 'ev-1').pk,
  ],
  /** An endpoint's queue, the queue markers' partition, and a legacy shard. */
  webhookDue: [webhookDueKey('acme', 'e-1'), WEBHOOK_DUE_QUEUES, legacyWebhookDueShardKey(2)],
};

describe('going live', () => {
  let dev: Synthesized;
  let prodSandbox: Synthesized;
  let prodFull: Synthesized;
  let everything: Synthesized;

  beforeAll(async () => {
    [dev, prodSandbox, prodFull, everything] = await synthesized(
      {},
      { stage: 'prod', ...PROD_PINNED, sandbox: 'true', alarmEmail: ALARM_EMAIL, noCustomDomain: 'true' },
      {
        stage: 'prod',
        ...PROD_PINNED,
        connectorUrl: 'https://connector.clearing.example',
        alarmEmail: ALARM_EMAIL,
        domainName: DOMAIN,
        certificateArn: CERTIFICATE,
        backupRegion: BACKUP_REGION,
      },
      {
        stage: 'uat',
        sandbox: 'true',
        waf: 'true',
        tableCmk: 'true',
        alarmTopicArn: PAGING_TOPIC_ARN,
        domainName: DOMAIN,
        certificateArn: CERTIFICATE,
        mtlsTruststoreUri: TRUSTSTORE,
        backupRegion: BACKUP_REGION,
        backupCopyVaultArn: COPY_VAULT_ARN,
        backupVaultLock: 'compliance',
        backupRetentionDays: '90',
        reservedConcurrencyApi: '5',
      },
    );
  }, SYNTH_TIMEOUT_MS);
  const all = (): [string, Synthesized][] => [
    ['dev', dev],
    ['prod sandbox', prodSandbox],
    ['prod full', prodFull],
    ['every option', everything],
  ];

  describe('policy as code', () => {
    it('has no unacknowledged Control Tower (cfn-guard) or cdk-nag finding on any stage', () => {
      for (const [stage, synthesized] of all()) {
        expect(synthesized.guardFindings, stage).toEqual([]);
        expect(synthesized.nagFindings, stage).toEqual([]);
      }
    });

    it(
      'fails synthesis on an unacknowledged Control Tower finding, whatever else is acknowledged',
      async () => {
        const { createApp } = await import('../../lib/credit-transfer-app.ts');
        const { BUILTIN_VALIDATION, CDK_JSON_CONTEXT } = await import('./synth.ts');
        const { Validations } = await import('aws-cdk-lib');
        const { Queue } = await import('aws-cdk-lib/aws-sqs');
        // As `cdk synth` runs it (validation errors fail it); bundling skipped.
        const { app, stack } = createApp({
          builtinCloudFormationValidation: BUILTIN_VALIDATION,
          context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [] },
        });
        // Encrypted and TLS-only (cdk-nag is content) but without a dead-letter queue (CT.SQS.PR.1).
        const queue = new Queue(stack, 'QueueWithoutDeadLetters', { enforceSSL: true });
        Validations.of(queue).acknowledge({
          id: 'AwsSolutions-SQS3',
          reason: 'The check under test is cfn-guard',
        });
        expect(() => app.synth()).toThrow(/sqs_dlq_check/);
      },
      SYNTH_TIMEOUT_MS,
    );
  });

  describe('recovery', () => {
    const plan = (s: Synthesized) =>
      onlyOne(resourcesOf(s.template, 'AWS::Backup::BackupPlan').values(), 'plan');
    type Rule = {
      ScheduleExpression: string;
      Lifecycle: { DeleteAfterDays: number };
      CopyActions?: { DestinationBackupVaultArn: unknown; Lifecycle?: { DeleteAfterDays: number } }[];
      TargetBackupVault: unknown;
    };
    const ruleOf = (s: Synthesized): Rule =>
      onlyOne((plan(s).Properties.BackupPlan as { BackupPlanRule: Rule[] }).BackupPlanRule, 'rule');

    it('backs the table up daily into a retained vault of its own, kept 35 days on prod, 7 elsewhere, as long as asked', () => {
      for (const [stage, s, days] of [
        ['dev', dev, 7],
        ['prod', prodSandbox, 35],
        ['every option', everything, 90],
      ] as const) {
        const rule = ruleOf(s);
        expect(rule.ScheduleExpression, stage).toMatch(/^cron\(\d+ \d+ \* \* \? \*\)$/);
        expect(rule.Lifecycle.DeleteAfterDays, stage).toBe(days);
        const [vaultId, vault] = onlyOne(resourcesOf(s.template, 'AWS::Backup::BackupVault'), 'vault');
        expect(getAttTargets(rule.TargetBackupVault), stage).toEqual([vaultId]);
        expect(vault.DeletionPolicy, stage).toBe('Retain');
        const [keyId] = getAttTargets(vault.Properties.EncryptionKeyArn);
        expect(resourcesOf(s.template, 'AWS::KMS::Key').has(keyId as string), stage).toBe(true);

        const selection = onlyOne(
          resourcesOf(s.template, 'AWS::Backup::BackupSelection').values(),
          'selection',
        );
        const tableId = onlyOne(resourcesOf(s.template, 'AWS::DynamoDB::Table').keys(), 'table');
        const selected = (selection.Properties.BackupSelection as { Resources: unknown[] }).Resources;
        expect(selected.flatMap(getAttTargets), stage).toEqual([tableId]);
      }
    });

    it('copies every backup to the backup region, into the vault the recovery stack keeps there', () => {
      expect(ruleOf(dev).CopyActions ?? []).toEqual([]);
      const recovery = prodFull.recoveryTemplate as Template;
      expect(recovery).toBeDefined();
      const copyVault = onlyOne(resourcesOf(recovery, 'AWS::Backup::BackupVault').values(), 'copy vault');
      expect(copyVault.DeletionPolicy).toBe('Retain');
      const copy = onlyOne(ruleOf(prodFull).CopyActions ?? [], 'copy action');
      const arn = JSON.stringify(copy.DestinationBackupVaultArn);
      expect(arn).toContain(`:backup:${BACKUP_REGION}:`);
      expect(arn).toContain(`:backup-vault:${String(copyVault.Properties.BackupVaultName)}`);
      expect(copy.Lifecycle?.DeleteAfterDays).toBe(35);
      expect(dev.recoveryTemplate).toBeUndefined();
    });

    it("copies to another account's vault as well when named, and locks the vaults when asked", () => {
      const copies = (ruleOf(everything).CopyActions ?? []).map((c) =>
        JSON.stringify(c.DestinationBackupVaultArn),
      );
      expect(copies).toHaveLength(2);
      expect(copies).toContain(JSON.stringify(COPY_VAULT_ARN));
      for (const template of [everything.template, everything.recoveryTemplate as Template]) {
        const vault = onlyOne(resourcesOf(template, 'AWS::Backup::BackupVault').values(), 'vault');
        expect(vault.Properties.LockConfiguration).toEqual({ MinRetentionDays: 90, ChangeableForDays: 3 });
      }
      // prod is locked in governance mode unless told otherwise; other stages are not.
      const governed = onlyOne(resourcesOf(prodFull.template, 'AWS::Backup::BackupVault').values(), 'vault');
      expect(governed.Properties.LockConfiguration).toEqual({ MinRetentionDays: 35 });
      const unlocked = onlyOne(resourcesOf(dev.template, 'AWS::Backup::BackupVault').values(), 'vault');
      expect(unlocked.Properties.LockConfiguration).toBeUndefined();
    });

    it('replicates the connector secret it creates to the backup region', () => {
      const secret = onlyOne(
        resourcesOf(prodFull.template, 'AWS::SecretsManager::Secret').values(),
        'secret',
      );
      expect(secret.Properties.ReplicaRegions).toEqual([{ Region: BACKUP_REGION }]);
    });
  });

  describe('stages that do not interfere', () => {
    it('refuses prod without anyone to page, in one line; an existing topic will do', () => {
      let message = '';
      try {
        synthesize({ stage: 'prod', sandbox: 'true' });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/alarmEmail/);
      expect(message).toMatch(/alarmTopicArn/);
      expect(message).not.toContain('\n');
    });

    it('notifies the existing paging topic too, from every alarm that pages', () => {
      const paging = [...resourcesOf(everything.template, 'AWS::CloudWatch::Alarm').values()].filter(
        (alarm) => String(alarm.Properties.AlarmDescription).startsWith('PAGE'),
      );
      expect(paging.length).toBeGreaterThan(0);
      for (const alarm of paging) {
        expect(alarm.Properties.AlarmActions).toContain(PAGING_TOPIC_ARN);
        expect(alarm.Properties.OKActions).toContain(PAGING_TOPIC_ARN);
      }
    });

    it("tells every function its stage, and the service's own metrics carry it", () => {
      for (const [stage, s] of [
        ['dev', dev],
        ['prod', prodSandbox],
      ] as const) {
        for (const [id, fn] of functionsOf(s.template))
          expect(environmentOf(fn).STAGE, `${stage} ${id}`).toBe(stage);
        const custom = [...resourcesOf(s.template, 'AWS::CloudWatch::Alarm').values()].filter(
          (alarm) => alarm.Properties.Namespace === 'CreditTransfers',
        );
        expect(custom.length, stage).toBeGreaterThan(0);
        for (const alarm of custom) {
          expect(alarm.Properties.Dimensions, stage).toContainEqual({ Name: 'stage', Value: stage });
        }
      }
    });

    it('reserves concurrency per function group on prod, none by default elsewhere, as asked', () => {
      for (const [id, fn] of functionsOf(prodSandbox.template)) {
        if (id.startsWith(AWS_CUSTOM_RESOURCE_PROVIDER)) continue;
        const group = groupOf(prodSandbox.template, id);
        expect(fn.Properties.ReservedConcurrentExecutions, `${id} ${group}`).toBe(
          PRODUCTION_RESERVED_CONCURRENCY[group],
        );
      }
      for (const [id, fn] of functionsOf(dev.template))
        expect(fn.Properties.ReservedConcurrentExecutions, id).toBeUndefined();
      for (const [id, fn] of functionsOf(everything.template)) {
        if (id.startsWith(AWS_CUSTOM_RESOURCE_PROVIDER)) continue;
        const expected = groupOf(everything.template, id) === 'api' ? 5 : undefined;
        expect(fn.Properties.ReservedConcurrentExecutions, id).toBe(expected);
      }
    });

    it('states for every alarm what missing data means; only the reconciler heartbeat and its stuck count breach on it', () => {
      for (const [stage, { template }] of all()) {
        const alarms = [...resourcesOf(template, 'AWS::CloudWatch::Alarm')];
        for (const [id, alarm] of alarms)
          expect(alarm.Properties.TreatMissingData, `${stage} ${id}`).toBeDefined();
        // The stuck count comes from every reconciler run: its absence is no all-clear (prod-review.test.ts).
        const [, heartbeat] = onlyOne(
          alarms.filter(
            ([id, alarm]) =>
              alarm.Properties.TreatMissingData === 'breaching' && !id.startsWith('MonitoringTransfersStuck'),
          ),
          'alarm breaching on missing data',
        );
        expect(
          alarms.filter(([, alarm]) => alarm.Properties.TreatMissingData === 'breaching').map(([id]) => id),
          stage,
        ).toHaveLength(2);
        const reconciler = [...functionsOf(template)].find(([, fn]) =>
          descriptionOf(fn).startsWith('Lifecycle: drives on'),
        )?.[0];
        const schedule = onlyOne(resourcesOf(template, 'AWS::Scheduler::Schedule').values(), 'schedule');
        expect(getAttTargets((schedule.Properties.Target as { Arn: unknown }).Arn), stage).toEqual([
          reconciler,
        ]);
        const minutes = Number(
          /^rate\((\d+) minutes?\)$/.exec(String(schedule.Properties.ScheduleExpression))?.[1],
        );
        expect(heartbeat.Properties, stage).toMatchObject({
          Namespace: 'AWS/Lambda',
          MetricName: 'Invocations',
          Statistic: 'Sum',
          Period: minutes * 60,
          ComparisonOperator: 'LessThanThreshold',
          Threshold: 1,
        });
        expect(refOf((heartbeat.Properties.Dimensions as { Value: unknown }[])[0]?.Value), stage).toBe(
          reconciler,
        );
      }
    });

    it('alarms on aborted and throttled executions, every function near its timeout, every queue’s oldest message and WAF blocks', () => {
      for (const [stage, { template }] of all()) {
        const alarms = [...resourcesOf(template, 'AWS::CloudWatch::Alarm').values()];
        // Both machines' executions, each alarm summing the fast path's and the long waits'.
        // A metric an alarm watches, alone or in its metric math: its name and first dimension.
        const watched = (a: Resource): [unknown, unknown][] =>
          a.Properties.MetricName !== undefined
            ? [[a.Properties.MetricName, (a.Properties.Dimensions as { Value: unknown }[])[0]?.Value]]
            : ((a.Properties.Metrics ?? []) as { MetricStat?: { Metric: Record<string, unknown> } }[]).map(
                (m) => [
                  m.MetricStat?.Metric.MetricName,
                  (m.MetricStat?.Metric.Dimensions as { Value: unknown }[] | undefined)?.[0]?.Value,
                ],
              );
        for (const machineId of resourcesOf(template, 'AWS::StepFunctions::StateMachine').keys()) {
          for (const metric of ['ExecutionsAborted', 'ExecutionThrottled']) {
            const watching = alarms.filter((a) =>
              watched(a).some(([name, dimension]) => name === metric && refOf(dimension) === machineId),
            );
            expect(watching, `${stage} ${metric} ${machineId}`).toHaveLength(1);
          }
        }
        for (const [id, fn] of functionsOf(template)) {
          // CDK's AwsCustomResource provider (the signing keys' replication) runs only at deploy time.
          if (id.startsWith(AWS_CUSTOM_RESOURCE_PROVIDER)) continue;
          const [near] = alarms.filter(
            (a) =>
              a.Properties.MetricName === 'Duration' &&
              refOf((a.Properties.Dimensions as { Value: unknown }[])[0]?.Value) === id,
          );
          const timeoutMs = Number(fn.Properties.Timeout) * 1000;
          expect(near?.Properties.ExtendedStatistic, `${stage} ${id}`).toBe('p99');
          expect(near?.Properties.Threshold as number, `${stage} ${id}`).toBeLessThan(timeoutMs);
          expect(near?.Properties.Threshold as number, `${stage} ${id}`).toBeGreaterThanOrEqual(
            timeoutMs / 2,
          );
        }
        for (const queueId of resourcesOf(template, 'AWS::SQS::Queue').keys()) {
          const oldest = alarms.filter(
            (a) =>
              a.Properties.MetricName === 'ApproximateAgeOfOldestMessage' &&
              getAttTargets(a.Properties.Dimensions).includes(queueId),
          );
          expect(oldest, `${stage} ${queueId}`).toHaveLength(1);
        }
        const acls = resourcesOf(template, 'AWS::WAFv2::WebACL');
        const blocks = alarms.filter((a) => a.Properties.MetricName === 'BlockedRequests');
        expect(blocks.length, stage).toBe(acls.size);
        for (const [, acl] of acls) {
          expect(blocks[0]?.Properties.Dimensions, stage).toContainEqual({
            Name: 'WebACL',
            Value: acl.Properties.Name,
          });
        }
      }
    });
  });

  describe('least privilege', () => {
    it('builds every partition key under the prefix its grants name', () => {
      const under = (prefix: string, value: string) => expect(value.startsWith(prefix), value).toBe(true);
      under(KEY_PREFIXES.creditTransfers, PARTITIONS.creditTransfer);
      for (const value of PARTITIONS.listIndexes) under(KEY_PREFIXES.creditTransferLists, value);
      under(KEY_PREFIXES.clients, PARTITIONS.client);
      under(KEY_PREFIXES.authenticationThrottle, PARTITIONS.throttle);
      under(KEY_PREFIXES.recovery, PARTITIONS.recovery);
      under(KEY_PREFIXES.sandboxClearing, PARTITIONS.sandboxClearing);
      under(KEY_PREFIXES.signingKeys, PARTITIONS.signingKeys);
      for (const value of PARTITIONS.webhookEndpoints) under(KEY_PREFIXES.webhookEndpoints, value);
      for (const value of PARTITIONS.events) under(KEY_PREFIXES.events, value);
      for (const value of PARTITIONS.deliveries) under(KEY_PREFIXES.deliveries, value);
      for (const value of PARTITIONS.webhookDue) under(KEY_PREFIXES.webhookDue, value);
      // No prefix covers another's items.
      const prefixes = Object.values(KEY_PREFIXES);
      for (const a of prefixes)
        for (const b of prefixes) if (a !== b) expect(b.startsWith(a), `${a} ${b}`).toBe(false);
    });

    it('conditions every table grant on the partition keys the function needs', () => {
      for (const [stage, { template }] of all()) {
        for (const id of functionsOf(template).keys()) {
          const statements = statementsOfFunction(template, id) as PolicyStatement[];
          for (const statement of statements.filter((s) =>
            actionsOf(s).some((a) => a.startsWith('dynamodb:')),
          )) {
            expect(statement.Effect).toBe('Allow');
            expect(leadingKeysOf(statement), `${stage} ${id} ${actionsOf(statement)}`).toBeDefined();
          }
        }
      }
    });

    it('lets no workflow task, reconciler or token function write a client record; each writes only its items', () => {
      for (const [stage, { template }] of all()) {
        const writable = (id: string): string[] =>
          (statementsOfFunction(template, id) as PolicyStatement[])
            .filter((s) => actionsOf(s).some((a) => TABLE_WRITES.includes(a)))
            .flatMap((s) => leadingKeysOf(s) ?? ['*']);
        const canWrite = (id: string, partition: string): boolean =>
          writable(id).some((pattern) => likeMatches(pattern, partition));

        for (const [id, fn] of functionsOf(template)) {
          expect(canWrite(id, PARTITIONS.client), `${stage} ${id} writes clients`).toBe(false);
          const description = descriptionOf(fn);
          const task = Object.values(WORKFLOW_FUNCTIONS).some((w) => description.startsWith(w.description));
          if (description.startsWith('POST /oauth/token')) {
            expect(canWrite(id, PARTITIONS.throttle), stage).toBe(true);
            expect(canWrite(id, PARTITIONS.creditTransfer), stage).toBe(false);
          }
          if (task || description.startsWith('Lifecycle: drives on')) {
            expect(canWrite(id, PARTITIONS.creditTransfer), `${stage} ${id}`).toBe(true);
            expect(canWrite(id, PARTITIONS.throttle), `${stage} ${id}`).toBe(false);
          }
        }
      }
      // The reconciler queries only the recovery index's partitions.
      const reconciler = [...functionsOf(dev.template)].find(([, fn]) =>
        descriptionOf(fn).startsWith('Lifecycle: drives on'),
      )?.[0] as string;
      const query = (statementsOfFunction(dev.template, reconciler) as PolicyStatement[]).filter((s) =>
        actionsOf(s).includes('dynamodb:Query'),
      );
      expect(query.flatMap((s) => leadingKeysOf(s) ?? [])).toEqual([`${KEY_PREFIXES.recovery}*`]);
      expect(RECONCILER_ENTRY).toBeDefined();
    });

    it('lets only the writers of each kind of item write it: payments, webhook endpoints and their secrets, events, deliveries, clients', () => {
      // A function by what it is: its route's operationId, its workflow task, or its own name.
      const routeOf = new Map(
        ROUTES.map((route) => [`${route.method} ${route.path}: ${route.summary}`, route.operationId]),
      );
      const named: [string, string][] = [
        ...Object.entries(WORKFLOW_FUNCTIONS).map(([key, w]): [string, string] => [w.description, key]),
        ['Lifecycle: drives on', 'reconciler'],
        ['Batches: starts the lifecycles', 'batchLifecycles'],
        ['Webhooks: records status events', 'webhookIngest'],
        ['Webhooks: sends the deliveries', 'webhookDeliver'],
      ];
      const nameOf = (fn: Resource): string => {
        const description = descriptionOf(fn);
        return (
          routeOf.get(description) ??
          named.find(([prefix]) => description.startsWith(prefix))?.[1] ??
          description
        );
      };
      const KINDS = {
        payments: [PARTITIONS.creditTransfer],
        webhookEndpoints: PARTITIONS.webhookEndpoints,
        events: PARTITIONS.events.slice(0, 2),
        deliveries: PARTITIONS.deliveries,
        clients: [PARTITIONS.client],
      };
      const WRITERS: Record<keyof typeof KINDS, string[]> = {
        payments: [
          'batchLifecycles',
          'cancelCreditTransfer',
          'decideCreditTransferApproval',
          'decideCreditTransferBatchApproval',
          'initiateCreditTransfer',
          'parkTransfer',
          'pollClearing',
          'publishStatusEvents',
          'reconciler',
          'submitCreditTransferBatch',
          'submitToClearing',
          'validateCheckAndSubmit',
        ],
        webhookEndpoints: [
          'createWebhookEndpoint',
          'deleteWebhookEndpoint',
          'rotateWebhookSecret',
          'webhookDeliver',
          'webhookIngest',
        ],
        events: ['webhookIngest'],
        deliveries: ['redeliverWebhookEvents', 'webhookDeliver', 'webhookIngest'],
        clients: [],
      };
      for (const [stage, { template }] of all()) {
        const writesOf = (id: string, action?: string): string[] =>
          (statementsOfFunction(template, id) as PolicyStatement[])
            .filter((s) => actionsOf(s).some((a) => (action ? a === action : TABLE_WRITES.includes(a))))
            .flatMap((s) => leadingKeysOf(s) ?? ['*']);
        const writers = (partitions: string[], action?: string): string[] =>
          [...functionsOf(template)]
            .filter(([id]) =>
              writesOf(id, action).some((pattern) => partitions.some((p) => likeMatches(pattern, p))),
            )
            .map(([, fn]) => nameOf(fn))
            .sort();
        for (const [kind, partitions] of Object.entries(KINDS))
          expect(writers(partitions), `${stage} ${kind}`).toEqual(WRITERS[kind as keyof typeof KINDS]);
        // The finding of issue 29: the secret rotation may put its endpoint, never a payment.
        expect(writers([PARTITIONS.creditTransfer], 'dynamodb:PutItem'), stage).not.toContain(
          'rotateWebhookSecret',
        );
        expect(writers(PARTITIONS.webhookEndpoints, 'dynamodb:PutItem'), stage).toContain(
          'rotateWebhookSecret',
        );
      }
    });

    it('gives every KMS key a policy of its own: no kms:*, no use by the account but through a service, no grants but for AWS resources', () => {
      const uses = [
        'kms:Encrypt',
        'kms:Decrypt',
        'kms:GenerateDataKey',
        'kms:Sign',
        'kms:GenerateMac',
        'kms:ReEncryptFrom',
      ];
      const covers = (pattern: string, action: string) =>
        likeMatches(pattern.toLowerCase(), action.toLowerCase());
      for (const [stage, s] of all()) {
        const templates = [s.template, ...(s.recoveryTemplate ? [s.recoveryTemplate] : [])];
        for (const template of templates) {
          for (const [id, key] of resourcesOf(template, 'AWS::KMS::Key')) {
            const statements = (key.Properties.KeyPolicy as { Statement: PolicyStatement[] }).Statement;
            for (const statement of statements) {
              expect(actionsOf(statement), `${stage} ${id}`).not.toContain('kms:*');
              const root = JSON.stringify(statement.Principal ?? {}).includes(':root');
              if (statement.Effect !== 'Allow' || !root) continue;
              const used = actionsOf(statement).filter((a) => uses.some((use) => covers(a, use)));
              if (used.length > 0) {
                expect(
                  statement.Condition?.StringEquals?.['kms:ViaService'],
                  `${stage} ${id} ${used}`,
                ).toBeDefined();
              }
            }
            expect(
              statements.some(
                (st) =>
                  st.Effect === 'Deny' &&
                  actionsOf(st).includes('kms:CreateGrant') &&
                  st.Condition?.BoolIfExists?.['kms:GrantIsForAWSResource'] === 'false',
              ),
              `${stage} ${id}`,
            ).toBe(true);
          }
        }
      }
    });
  });

  describe('the edge', () => {
    const restApi = (s: Synthesized) =>
      onlyOne(resourcesOf(s.template, 'AWS::ApiGateway::RestApi').values(), 'API');

    it('disables the execute-api endpoint where a custom domain serves the API, and outputs the domain', () => {
      expect(restApi(prodFull).Properties.DisableExecuteApiEndpoint).toBe(true);
      expect(restApi(dev).Properties.DisableExecuteApiEndpoint).toBeFalsy();
      const outputs = prodFull.template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(outputs.ApiUrl?.Value).toBe(`https://${DOMAIN}/`);
    });

    it('asks for client certificates from the S3 truststore when mutual TLS is on', () => {
      const domain = onlyOne(
        resourcesOf(everything.template, 'AWS::ApiGateway::DomainName').values(),
        'domain',
      );
      expect(domain.Properties.MutualTlsAuthentication).toEqual({ TruststoreUri: TRUSTSTORE });
      expect(domain.Properties.SecurityPolicy).toBe('TLS_1_2');
      const plain = onlyOne(resourcesOf(prodFull.template, 'AWS::ApiGateway::DomainName').values(), 'domain');
      expect(plain.Properties.MutualTlsAuthentication).toBeUndefined();
    });

    it('logs WAF to an aws-waf-logs- group with the Authorization header redacted', () => {
      for (const s of [prodSandbox, prodFull, everything]) {
        const [aclId] = onlyOne(resourcesOf(s.template, 'AWS::WAFv2::WebACL'), 'web ACL');
        const logging = onlyOne(
          resourcesOf(s.template, 'AWS::WAFv2::LoggingConfiguration').values(),
          'logging',
        );
        expect(getAttTargets(logging.Properties.ResourceArn)).toEqual([aclId]);
        const destination = JSON.stringify(logging.Properties.LogDestinationConfigs);
        const [groupId] = onlyOne(
          [...resourcesOf(s.template, 'AWS::Logs::LogGroup')].filter(([, g]) =>
            String(g.Properties.LogGroupName).startsWith('aws-waf-logs-'),
          ),
          'WAF log group',
        );
        expect(destination).toContain(`:log-group:",{"Ref":"${groupId}"}`);
        expect(destination).not.toContain(':*');
        expect(
          (logging.Properties.RedactedFields as { SingleHeader?: { Name: string } }[]).map((f) =>
            f.SingleHeader?.Name.toLowerCase(),
          ),
        ).toContain('authorization');
      }
    });

    it('logs only the requests WAF blocked or counted: allowed ones are in the access log already', () => {
      for (const s of [prodSandbox, prodFull, everything]) {
        const logging = onlyOne(
          resourcesOf(s.template, 'AWS::WAFv2::LoggingConfiguration').values(),
          'logging',
        );
        type Filter = {
          Behavior: string;
          Requirement: string;
          Conditions: { ActionCondition?: { Action: string } }[];
        };
        const filter = logging.Properties.LoggingFilter as
          | { DefaultBehavior: string; Filters: Filter[] }
          | undefined;
        expect(filter?.DefaultBehavior).toBe('DROP');
        const kept = (filter?.Filters ?? [])
          .filter((f) => f.Behavior === 'KEEP' && f.Requirement === 'MEETS_ANY')
          .flatMap((f) => f.Conditions.map((c) => c.ActionCondition?.Action));
        // A managed rule overridden to count (COMMON_RULES_COUNTED) is logged as EXCLUDED_AS_COUNT.
        expect(new Set(kept)).toEqual(new Set(['BLOCK', 'COUNT', 'EXCLUDED_AS_COUNT']));
        expect(JSON.stringify(filter)).not.toContain('ALLOW');
      }
    });

    it("blocks with AWS's common rule set, except the rules that would refuse valid requests, which only count", () => {
      const acl = onlyOne(resourcesOf(prodSandbox.template, 'AWS::WAFv2::WebACL').values(), 'web ACL');
      type Rule = {
        OverrideAction?: unknown;
        Statement: {
          ManagedRuleGroupStatement?: {
            Name: string;
            RuleActionOverrides?: { Name: string; ActionToUse: unknown }[];
          };
        };
      };
      const common = onlyOne(
        (acl.Properties.Rules as Rule[]).filter(
          (r) => r.Statement.ManagedRuleGroupStatement?.Name === 'AWSManagedRulesCommonRuleSet',
        ),
        'common rule set',
      );
      expect(common.OverrideAction).toEqual({ None: {} });
      const overrides = common.Statement.ManagedRuleGroupStatement?.RuleActionOverrides ?? [];
      expect(overrides.map((o) => o.Name).sort()).toEqual(Object.keys(COMMON_RULES_COUNTED).sort());
      for (const override of overrides) expect(override.ActionToUse).toEqual({ Count: {} });
      // Valid bodies reach 64 KiB, past the rule's 8 KB.
      expect(overrides.map((o) => o.Name)).toContain('SizeRestrictions_BODY');
      for (const reason of Object.values(COMMON_RULES_COUNTED)) expect(reason.length).toBeGreaterThan(20);
    });
  });

  describe('tear-down', () => {
    it('keeps the event archive, its bus and both dead-letter queues when the stack goes', () => {
      for (const [stage, { template }] of all()) {
        for (const type of ['AWS::Events::Archive', 'AWS::Events::EventBus']) {
          expect(onlyOne(resourcesOf(template, type).values(), type).DeletionPolicy, `${stage} ${type}`).toBe(
            'Retain',
          );
        }
        const deadLetterIds = [...resourcesOf(template, 'AWS::SQS::Queue').values()].flatMap((q) =>
          getAttTargets(
            (q.Properties.RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined)
              ?.deadLetterTargetArn,
          ),
        );
        const ruleDeadLetterIds = [...resourcesOf(template, 'AWS::Events::Rule').values()].flatMap((r) =>
          ((r.Properties.Targets ?? []) as { DeadLetterConfig?: { Arn: unknown } }[]).flatMap((t) =>
            getAttTargets(t.DeadLetterConfig?.Arn),
          ),
        );
        for (const id of [...deadLetterIds, ...ruleDeadLetterIds]) {
          expect(resourcesOf(template, 'AWS::SQS::Queue').get(id)?.DeletionPolicy, `${stage} ${id}`).toBe(
            'Retain',
          );
        }
      }
    });

    it('names in the runbook every kind of resource a stack leaves behind', () => {
      const runbook = readFileSync(join(PROJECT_ROOT, 'docs/operations.md'), 'utf8');
      const tearDown = runbook.slice(runbook.indexOf('## Tearing down'));
      expect(tearDown.length).toBeGreaterThan(100);
      const retained = new Set<string>();
      for (const [, s] of all()) {
        for (const template of [s.template, ...(s.recoveryTemplate ? [s.recoveryTemplate] : [])]) {
          const resources = template.toJSON().Resources as Record<string, Resource>;
          for (const resource of Object.values(resources)) {
            if (resource.DeletionPolicy === 'Retain') retained.add(resource.Type);
          }
        }
      }
      expect(retained.size).toBeGreaterThan(5);
      for (const type of retained) expect(tearDown, type).toContain(`\`${type}\``);
    });
  });
});
