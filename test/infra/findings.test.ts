import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/credit-transfer-app.ts';
import { stageConfig } from '../../lib/stage-config.ts';
import { CDK_JSON_CONTEXT, SYNTH_TIMEOUT_MS, type Synthesized, synthesized } from './synth.ts';
import {
  getAttTargets,
  type Resource,
  resourcesOf,
  type Statement,
  statementsOfFunction,
} from './template-queries.ts';

/**
 * The go-live review's findings, each asserted on the synthesized `dev` and `prod` templates:
 * the status event bus's resource policy and the alarm on forged events, key policies
 * administered by a named role (not the account root), the stage pinned to its account, the
 * table under a customer managed key on `prod`, and the webhook signing secrets sealed under a
 * key only the functions that seal or sign may use.
 */
const ACCOUNT = '123456789012';
const KEY_ADMIN_ROLE = `arn:aws:iam::${ACCOUNT}:role/payments-key-admin`;
const PROD = {
  stage: 'prod',
  sandbox: 'true',
  alarmEmail: 'payments-oncall@bank.example',
  account: ACCOUNT,
  keyAdminRoleArn: KEY_ADMIN_ROLE,
  region: 'eu-west-1',
  noCustomDomain: 'true',
};

interface PolicyStatement extends Statement {
  Sid?: string;
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const actionsOf = (statement: Statement): string[] => [statement.Action].flat();
const isAccountRoot = (principal: unknown): boolean => JSON.stringify(principal ?? '').includes(':root');

const functionByDescription = (template: Synthesized['template'], prefix: string): string => {
  const found = [...resourcesOf(template, 'AWS::Lambda::Function')].filter(([, fn]) =>
    String(fn.Properties.Description ?? '').startsWith(prefix),
  );
  if (found.length !== 1)
    throw new Error(`Expected one function described "${prefix}…", found ${found.length}`);
  return (found[0] as [string, Resource])[0];
};
const roleOf = (template: Synthesized['template'], functionId: string): string => {
  const [roleId] = getAttTargets(
    resourcesOf(template, 'AWS::Lambda::Function').get(functionId)?.Properties.Role,
  );
  if (roleId === undefined) throw new Error(`No role for ${functionId}`);
  return roleId;
};
const keyPolicyOf = (key: Resource): PolicyStatement[] =>
  (key.Properties.KeyPolicy as { Statement: PolicyStatement[] }).Statement;

/** Each stage synthesized once per run, shared with the files asserting on the same stage. */
const stages: Record<string, Synthesized> = {};

describe.each(['dev', 'prod'])('stage %s', (stage) => {
  beforeAll(async () => {
    [stages[stage]] = await synthesized(stage === 'prod' ? PROD : {});
  }, SYNTH_TIMEOUT_MS);
  const template = () => (stages[stage] as Synthesized).template;

  it('lets only the status event publisher put events on the status bus', () => {
    const publisher = functionByDescription(template(), 'Lifecycle: publishes');
    // The bus's policy, on the bus itself or as an EventBusPolicy resource naming it.
    const [busId, bus] = [...resourcesOf(template(), 'AWS::Events::EventBus')][0] as [string, Resource];
    const onBus = ((bus.Properties.Policy as { Statement?: PolicyStatement[] } | undefined)?.Statement ??
      []) as PolicyStatement[];
    const separate = [...resourcesOf(template(), 'AWS::Events::EventBusPolicy').values()]
      .filter((policy) => JSON.stringify(policy.Properties.EventBusName).includes(busId))
      .map((policy) => policy.Properties.Statement as PolicyStatement);
    const deny = [...onBus, ...separate].find(
      // CDK prefixes the Sid of an EventBusPolicy statement with `cdk-`.
      (statement) => statement.Sid?.endsWith('OnlyThePublisherPutsStatusEvents'),
    );
    expect(deny).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Action: 'events:PutEvents' });
    expect(getAttTargets(deny?.Condition?.ArnNotEquals?.['aws:PrincipalArn'])).toEqual([
      roleOf(template(), publisher),
    ]);
    // Status events only: the clients tool's audit events (another source) stay open to IAM.
    expect(deny?.Condition?.['ForAnyValue:StringEquals']).toEqual({ 'events:source': 'credit-transfers' });
  });

  it('alarms on any status event dropped as forged, and lets ingestion read the transfer it checks', () => {
    const alarms = [...resourcesOf(template(), 'AWS::CloudWatch::Alarm').values()].filter(
      (alarm) => alarm.Properties.MetricName === 'StatusEventsForged',
    );
    expect(alarms).toHaveLength(1);
    expect(alarms[0]?.Properties).toMatchObject({
      Namespace: 'CreditTransfers',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Dimensions: expect.arrayContaining([{ Name: 'stage', Value: stage }]),
    });
    expect(alarms[0]?.Properties.AlarmActions).toBeDefined();
    const ingest = functionByDescription(template(), 'Webhooks: records status events');
    const reads = statementsOfFunction(template(), ingest).filter(
      (statement) => statement.Effect === 'Allow' && actionsOf(statement).includes('dynamodb:GetItem'),
    );
    expect(reads.length).toBeGreaterThan(0);
  });

  it('gives the account root no key administration: only the root user itself may put a policy, for recovery', () => {
    const keys = resourcesOf(template(), 'AWS::KMS::Key');
    expect(keys.size).toBeGreaterThanOrEqual(4);
    for (const [id, key] of keys) {
      const statements = keyPolicyOf(key);
      for (const statement of statements.filter((s) => s.Effect === 'Allow')) {
        expect(actionsOf(statement), id).not.toContain('kms:*');
        if (!isAccountRoot(statement.Principal)) continue;
        const actions = actionsOf(statement);
        if (statement.Condition?.StringEquals?.['kms:ViaService'] !== undefined) {
          // Use through an AWS service (DynamoDB, Backup) for the account's principals: no administration.
          expect(
            actions.filter(
              (a) => !/^kms:(Encrypt|Decrypt|ReEncrypt\*|GenerateDataKey\*|DescribeKey|CreateGrant)$/.test(a),
            ),
            id,
          ).toEqual([]);
          continue;
        }
        if (actions.includes('kms:PutKeyPolicy')) {
          expect(statement.Sid, id).toBe('RootUserRecoversKey');
          expect(statement.Condition, id).toEqual({ StringEquals: { 'aws:PrincipalType': 'Account' } });
          expect(actions.sort(), id).toEqual(['kms:DescribeKey', 'kms:GetKeyPolicy', 'kms:PutKeyPolicy']);
          continue;
        }
        // What IAM may grant: reading a public key, nothing secret.
        expect(
          actions.filter((a) => a !== 'kms:GetPublicKey' && a !== 'kms:DescribeKey'),
          id,
        ).toEqual([]);
      }
      for (const forbidden of ['kms:DisableKey', 'kms:ScheduleKeyDeletion', 'kms:Sign', 'kms:CreateGrant']) {
        const rootAllowed = statements.filter(
          (s) =>
            s.Effect === 'Allow' &&
            isAccountRoot(s.Principal) &&
            s.Condition?.StringEquals?.['kms:ViaService'] === undefined &&
            actionsOf(s).includes(forbidden),
        );
        expect(rootAllowed, `${id} ${forbidden}`).toEqual([]);
      }
      // The deployment may put the next policy (the lockout safety check), as the CDK bootstrap's execution role.
      const deployment = statements.find((s) => s.Sid === 'DeploymentManagesKey');
      expect(JSON.stringify(deployment?.Principal), id).toContain('cfn-exec-role');
      expect(actionsOf(deployment as Statement), id).toContain('kms:PutKeyPolicy');
      const administrator = statements.find((s) => s.Sid === 'KeyAdministratorAdministersKey');
      if (stage === 'prod') {
        expect(administrator?.Principal, id).toEqual({ AWS: KEY_ADMIN_ROLE });
        expect(actionsOf(administrator as Statement), id).toEqual(
          expect.arrayContaining(['kms:DisableKey', 'kms:ScheduleKeyDeletion']),
        );
        expect(actionsOf(administrator as Statement), id).not.toContain('kms:Sign');
        // A policy of its own making could grant it kms:Sign: only the deployment puts the policy.
        expect(actionsOf(administrator as Statement), id).not.toContain('kms:PutKeyPolicy');
        const denied = statements.find((s) => s.Sid === 'KeyAdministratorCannotPutPolicy');
        expect(denied, id).toMatchObject({
          Effect: 'Deny',
          Principal: { AWS: KEY_ADMIN_ROLE },
          Action: 'kms:PutKeyPolicy',
        });
      } else {
        expect(administrator, id).toBeUndefined();
      }
    }
  });

  it('encrypts the table with a customer managed key on prod, by default', () => {
    const [table] = [...resourcesOf(template(), 'AWS::DynamoDB::Table').values()];
    const sse = table?.Properties.SSESpecification as Record<string, unknown>;
    if (stage === 'prod') {
      expect(sse).toMatchObject({ SSEEnabled: true, SSEType: 'KMS' });
      const [keyId] = getAttTargets(sse.KMSMasterKeyId);
      expect(resourcesOf(template(), 'AWS::KMS::Key').has(keyId as string)).toBe(true);
    } else {
      expect(sse.KMSMasterKeyId).toBeUndefined();
    }
  });

  it('seals webhook secrets under a key that only creation and rotation may seal with, and only the signing functions open', () => {
    const keys = [...resourcesOf(template(), 'AWS::KMS::Key')].filter(([, key]) =>
      String(key.Properties.Description).startsWith('Seals the webhook signing secrets'),
    );
    expect(keys).toHaveLength(1);
    const [keyId, key] = keys[0] as [string, Resource];
    const sealers = [
      functionByDescription(template(), 'POST /v1/webhook-endpoints:'),
      functionByDescription(template(), 'POST /v1/webhook-endpoints/{id}/secret-rotation:'),
    ];
    const openers = [
      functionByDescription(template(), 'Webhooks: records status events'),
      functionByDescription(template(), 'Webhooks: sends the deliveries'),
    ];
    const onKey = (statement: Statement) => JSON.stringify(statement.Resource).includes(keyId);
    for (const fn of resourcesOf(template(), 'AWS::Lambda::Function').keys()) {
      const granted = statementsOfFunction(template(), fn).filter(
        (s) => s.Effect === 'Allow' && onKey(s),
      ) as PolicyStatement[];
      const actions = granted.flatMap(actionsOf).sort();
      const expected = sealers.includes(fn)
        ? ['kms:GenerateDataKey']
        : openers.includes(fn)
          ? ['kms:Decrypt']
          : [];
      expect(actions, fn).toEqual(expected);
      for (const statement of granted) {
        expect(statement.Condition, fn).toMatchObject({
          StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-signing-secret' },
          Null: { 'kms:EncryptionContext:tenant': 'false', 'kms:EncryptionContext:webhookEndpoint': 'false' },
        });
      }
    }
    // The key policy names the same roles, with the same conditions; no one else may use it.
    const users = keyPolicyOf(key).filter(
      (s) =>
        s.Effect === 'Allow' && actionsOf(s).some((a) => a === 'kms:Decrypt' || a === 'kms:GenerateDataKey'),
    );
    expect(users.map((s) => [s.Sid, getAttTargets(s.Principal), s.Condition?.StringEquals])).toEqual(
      expect.arrayContaining([
        ...sealers.map((fn) => [
          'WebhookSecretSealer',
          [roleOf(template(), fn)],
          { 'kms:EncryptionContext:purpose': 'webhook-signing-secret' },
        ]),
        ...openers.map((fn) => [
          'WebhookSecretOpener',
          [roleOf(template(), fn)],
          { 'kms:EncryptionContext:purpose': 'webhook-signing-secret' },
        ]),
      ]),
    );
    expect(users).toHaveLength(sealers.length + openers.length);
  });
});

describe('prod settings that cannot be left out', () => {
  const context = (overrides: Record<string, string | undefined>) => (name: string) =>
    ({ ...PROD, ...overrides })[name as keyof typeof PROD];

  it('refuses prod without a key administrator role, in one line naming the setting', () => {
    expect(() => stageConfig(context({ keyAdminRoleArn: undefined }))).toThrow(
      /^[^\n]*-c keyAdminRoleArn=[^\n]*$/,
    );
    expect(() => stageConfig(context({ keyAdminRoleArn: 'payments-key-admin' }))).toThrow(/keyAdminRoleArn/);
    expect(() =>
      stageConfig(context({ keyAdminRoleArn: 'arn:aws:iam::999999999999:role/payments-key-admin' })),
    ).toThrow(/role of account 123456789012/);
  });

  it('refuses prod without an account, in one line naming the setting', () => {
    expect(() => stageConfig(context({ account: undefined }))).toThrow(/^[^\n]*-c account=[^\n]*$/);
    expect(() => stageConfig(context({ account: '1234' }))).toThrow(/12-digit/);
  });

  it('pins the stack to its account, and refuses credentials of another account in one line', () => {
    const previous = process.env.CDK_DEFAULT_ACCOUNT;
    try {
      process.env.CDK_DEFAULT_ACCOUNT = '999999999999';
      expect(() => createApp({ context: { ...CDK_JSON_CONTEXT, ...PROD } })).toThrow(
        /^Stage prod is pinned to account 123456789012 \(-c account\), but the credentials are of account 999999999999$/,
      );
    } finally {
      if (previous === undefined) delete process.env.CDK_DEFAULT_ACCOUNT;
      else process.env.CDK_DEFAULT_ACCOUNT = previous;
    }
    expect(stageConfig(context({})).account).toBe(ACCOUNT);
  });
});
