import { APIGatewayClient, GetAccountCommand } from '@aws-sdk/client-api-gateway';
import { BackupClient, DescribeRegionSettingsCommand } from '@aws-sdk/client-backup';
import {
  CloudTrailClient,
  DescribeTrailsCommand,
  GetEventSelectorsCommand,
  GetTrailStatusCommand,
} from '@aws-sdk/client-cloudtrail';
import { GetRoleCommand, IAMClient, NoSuchEntityException } from '@aws-sdk/client-iam';
import { DescribeKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { PRODUCTION_RESERVED_CONCURRENCY, reservedConcurrencyTotal } from '../../../lib/operations-config.ts';
import {
  checkApiGatewayCloudWatchRole,
  checkBackupOptIn,
  checkBootstrap,
  checkCallerAccount,
  checkCloudTrail,
  checkKeyAdminRole,
  checkLambdaConcurrency,
  checkSigningKeys,
  formatResult,
  type PreflightTarget,
  preflight,
} from '../../../scripts/preflight-checks.ts';

const ACCOUNT = '111111111111';
const ROLE = `arn:aws:iam::${ACCOUNT}:role/payments-key-admin`;
const TARGET: PreflightTarget = {
  stage: 'prod',
  region: 'eu-west-1',
  backupRegion: 'eu-central-1',
  account: ACCOUNT,
  keyAdminRoleArn: ROLE,
  reservedConcurrency: reservedConcurrencyTotal(PRODUCTION_RESERVED_CONCURRENCY),
};

const sts = mockClient(STSClient);
const apiGateway = mockClient(APIGatewayClient);
const iam = mockClient(IAMClient);
const lambda = mockClient(LambdaClient);
const backup = mockClient(BackupClient);
const ssm = mockClient(SSMClient);
const cloudTrail = mockClient(CloudTrailClient);
const kms = mockClient(KMSClient);
const all = [sts, apiGateway, iam, lambda, backup, ssm, cloudTrail, kms];
afterEach(() => {
  for (const mock of all) mock.reset();
});

const accessDenied = Object.assign(new Error('not allowed'), { name: 'AccessDeniedException' });

/** An account where every prerequisite is in place. */
const readyAccount = () => {
  sts
    .on(GetCallerIdentityCommand)
    .resolves({ Account: ACCOUNT, Arn: `arn:aws:sts::${ACCOUNT}:assumed-role/ops/me` });
  apiGateway.on(GetAccountCommand).resolves({ cloudwatchRoleArn: `arn:aws:iam::${ACCOUNT}:role/apigw-logs` });
  iam.on(GetRoleCommand, { RoleName: 'payments-key-admin' }).resolves({
    Role: { Arn: ROLE, RoleName: 'payments-key-admin', Path: '/', RoleId: 'AROA', CreateDate: new Date() },
  });
  lambda.on(GetAccountSettingsCommand).resolves({
    AccountLimit: { ConcurrentExecutions: 1000, UnreservedConcurrentExecutions: 1000 },
  });
  backup.on(DescribeRegionSettingsCommand).resolves({
    ResourceTypeOptInPreference: { DynamoDB: true },
    ResourceTypeManagementPreference: { DynamoDB: true },
  });
  ssm
    .on(GetParameterCommand)
    .resolves({ Parameter: { Name: '/cdk-bootstrap/hnb659fds/version', Value: '27' } });
  organizationTrail();
};

const ORG_TRAIL = 'arn:aws:cloudtrail:us-east-1:999999999999:trail/org-trail';
/** The organization's trail, from another region (a shadow trail here), logging every management event. */
const organizationTrail = () => {
  cloudTrail.on(DescribeTrailsCommand, { includeShadowTrails: true }).resolves({
    trailList: [
      {
        Name: 'org-trail',
        TrailARN: ORG_TRAIL,
        HomeRegion: 'us-east-1',
        IsMultiRegionTrail: true,
        IsOrganizationTrail: true,
      },
    ],
  });
  cloudTrail.on(GetTrailStatusCommand, { Name: ORG_TRAIL }).resolves({ IsLogging: true });
  cloudTrail
    .on(GetEventSelectorsCommand, { TrailName: ORG_TRAIL })
    .resolves({ EventSelectors: [{ ReadWriteType: 'All', IncludeManagementEvents: true }] });
};

describe('preflight of a stage', () => {
  it('passes every check of an account that is ready, in both regions, one line each', async () => {
    readyAccount();
    const results = await preflight(TARGET);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results.map((r) => r.name)).toEqual([
      'credentials',
      'CDK bootstrap (eu-west-1)',
      'CDK bootstrap (eu-central-1)',
      'API Gateway CloudWatch role (eu-west-1)',
      'key administrator role',
      'Lambda concurrency quota (eu-west-1)',
      'AWS Backup for DynamoDB (eu-west-1)',
      'AWS Backup for DynamoDB (eu-central-1)',
      'CloudTrail management events (eu-west-1)',
      'token signing keys',
    ]);
    // Each region asked its own client.
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(2);
    expect(backup.commandCalls(DescribeRegionSettingsCommand)).toHaveLength(2);
    for (const result of results) expect(formatResult(result)).toMatch(/^ok {3}[^\n]+$/);
  });

  it('refuses credentials of another account', async () => {
    sts
      .on(GetCallerIdentityCommand)
      .resolves({ Account: '222222222222', Arn: 'arn:aws:sts::222222222222:x' });
    const result = await checkCallerAccount(TARGET);
    expect(result.ok).toBe(false);
    expect(result.detail).toMatch(/not 111111111111: use credentials of account 111111111111/);
  });

  it("fails without the account's API Gateway CloudWatch role, saying how to set it", async () => {
    apiGateway.on(GetAccountCommand).resolves({});
    const result = await checkApiGatewayCloudWatchRole(TARGET);
    expect(result.ok).toBe(false);
    expect(result.detail).toMatch(/apiGatewayCloudWatchRole=true/);
    expect(formatResult(result)).toMatch(/^FAIL API Gateway CloudWatch role \(eu-west-1\): not set/);
  });

  it('fails when the key administrator role does not exist, or is not named on prod', async () => {
    iam.on(GetRoleCommand).rejects(new NoSuchEntityException({ message: 'no role', $metadata: {} }));
    const missing = await checkKeyAdminRole(TARGET);
    expect(missing.ok).toBe(false);
    expect(missing.detail).toMatch(/does not exist: create it first/);
    const { keyAdminRoleArn: _, ...unnamed } = TARGET;
    expect((await checkKeyAdminRole(unnamed)).ok).toBe(false);
    expect((await checkKeyAdminRole({ ...unnamed, stage: 'dev' })).ok).toBe(true);
    const otherAccount = await checkKeyAdminRole({
      ...TARGET,
      keyAdminRoleArn: 'arn:aws:iam::222222222222:role/x',
    });
    expect(otherAccount.detail).toMatch(/of account 222222222222, not 111111111111/);
  });

  it("fails when the account's concurrency cannot hold the stage's reservations and Lambda's unreserved 100", async () => {
    const needed = TARGET.reservedConcurrency + 100;
    lambda.on(GetAccountSettingsCommand).resolves({
      AccountLimit: { ConcurrentExecutions: needed - 1, UnreservedConcurrentExecutions: needed - 1 },
    });
    const short = await checkLambdaConcurrency(TARGET);
    expect(short.ok).toBe(false);
    expect(short.detail).toContain(`a limit of at least ${needed}`);
    lambda.on(GetAccountSettingsCommand).resolves({
      AccountLimit: { ConcurrentExecutions: needed, UnreservedConcurrentExecutions: needed },
    });
    expect((await checkLambdaConcurrency(TARGET)).ok).toBe(true);
  });

  it("fails where AWS Backup is not opted in to DynamoDB, naming the region's command", async () => {
    backup.on(DescribeRegionSettingsCommand).resolves({
      ResourceTypeOptInPreference: { DynamoDB: false },
      ResourceTypeManagementPreference: { DynamoDB: true },
    });
    const result = await checkBackupOptIn(TARGET, 'eu-central-1');
    expect(result.ok).toBe(false);
    expect(result.detail).toMatch(
      /not opted in; run aws backup update-region-settings --region eu-central-1/,
    );
    backup.on(DescribeRegionSettingsCommand).resolves({
      ResourceTypeOptInPreference: { DynamoDB: true },
      ResourceTypeManagementPreference: {},
    });
    expect((await checkBackupOptIn(TARGET, 'eu-central-1')).ok).toBe(false);
  });

  it('fails where the CDK bootstrap is missing or too old, naming the bootstrap command', async () => {
    ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ message: 'none', $metadata: {} }));
    const missing = await checkBootstrap(TARGET, 'eu-central-1');
    expect(missing.ok).toBe(false);
    expect(missing.detail).toBe('not bootstrapped: run npx cdk bootstrap aws://111111111111/eu-central-1');
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '5' } });
    expect((await checkBootstrap(TARGET, 'eu-central-1')).ok).toBe(false);
  });

  it('reports a call it may not make as a failure naming the permission, and goes on with the others', async () => {
    readyAccount();
    lambda.on(GetAccountSettingsCommand).rejects(accessDenied);
    const results = await preflight(TARGET);
    const failed = results.filter((r) => !r.ok);
    expect(failed.map(formatResult)).toEqual([
      'FAIL Lambda concurrency quota (eu-west-1): could not check (AccessDeniedException): run it with credentials allowed lambda:GetAccountSettings',
    ]);
    expect(results).toHaveLength(10);
  });

  describe('CloudTrail, which the KeyChanges alarm hears KMS calls through', () => {
    const trail = (overrides: object = {}) => ({
      Name: 'payments-trail',
      TrailARN: `arn:aws:cloudtrail:eu-west-1:${ACCOUNT}:trail/payments-trail`,
      HomeRegion: 'eu-west-1',
      IsMultiRegionTrail: false,
      ...overrides,
    });

    it("passes with the organization's trail from another region", async () => {
      organizationTrail();
      const result = await checkCloudTrail(TARGET);
      expect(formatResult(result)).toBe(
        'ok   CloudTrail management events (eu-west-1): org-trail (organization trail) records KMS key changes',
      );
    });

    it('passes with a trail of the region whose advanced selectors take management events', async () => {
      cloudTrail.on(DescribeTrailsCommand).resolves({ trailList: [trail()] });
      cloudTrail.on(GetTrailStatusCommand).resolves({ IsLogging: true });
      cloudTrail.on(GetEventSelectorsCommand).resolves({
        AdvancedEventSelectors: [
          { Name: 'management', FieldSelectors: [{ Field: 'eventCategory', Equals: ['Management'] }] },
        ],
      });
      expect((await checkCloudTrail(TARGET)).ok).toBe(true);
    });

    it('fails without a trail, saying how to make one, in one line', async () => {
      cloudTrail.on(DescribeTrailsCommand).resolves({ trailList: [] });
      const result = await checkCloudTrail(TARGET);
      expect(result.ok).toBe(false);
      expect(formatResult(result)).toMatch(
        /^FAIL CloudTrail management events \(eu-west-1\): no trail: the KeyChanges alarm never hears .*aws cloudtrail create-trail --name management-events .*--is-multi-region-trail[^\n]*$/,
      );
    });

    it("fails where no trail records KMS's write management events in the region, naming each trail's lack", async () => {
      const otherRegion = trail({
        Name: 'us-only',
        HomeRegion: 'us-east-1',
        TrailARN: 'arn:aws:cloudtrail:us-east-1:1:trail/us-only',
      });
      const stopped = trail({ Name: 'stopped', TrailARN: 'stopped-arn' });
      const readOnly = trail({ Name: 'read-only', TrailARN: 'read-only-arn' });
      const noKms = trail({ Name: 'no-kms', TrailARN: 'no-kms-arn' });
      const advancedReadOnly = trail({ Name: 'advanced-read-only', TrailARN: 'advanced-arn' });
      cloudTrail
        .on(DescribeTrailsCommand)
        .resolves({ trailList: [otherRegion, stopped, readOnly, noKms, advancedReadOnly] });
      cloudTrail.on(GetTrailStatusCommand).resolves({ IsLogging: true });
      cloudTrail.on(GetTrailStatusCommand, { Name: 'stopped-arn' }).resolves({ IsLogging: false });
      cloudTrail
        .on(GetEventSelectorsCommand, { TrailName: 'read-only-arn' })
        .resolves({ EventSelectors: [{ ReadWriteType: 'ReadOnly', IncludeManagementEvents: true }] });
      cloudTrail.on(GetEventSelectorsCommand, { TrailName: 'no-kms-arn' }).resolves({
        EventSelectors: [
          {
            ReadWriteType: 'All',
            IncludeManagementEvents: true,
            ExcludeManagementEventSources: ['kms.amazonaws.com'],
          },
        ],
      });
      cloudTrail.on(GetEventSelectorsCommand, { TrailName: 'advanced-arn' }).resolves({
        AdvancedEventSelectors: [
          {
            FieldSelectors: [
              { Field: 'eventCategory', Equals: ['Management'] },
              { Field: 'readOnly', Equals: ['true'] },
            ],
          },
        ],
      });
      const result = await checkCloudTrail(TARGET);
      expect(result.ok).toBe(false);
      expect(result.detail).toMatch(
        /^no trail records KMS key changes here, so the KeyChanges alarm never fires: /,
      );
      expect(result.detail).toContain('us-only is of us-east-1 only');
      expect(result.detail).toContain(
        'stopped is not logging (aws cloudtrail start-logging --name stopped-arn)',
      );
      for (const name of ['read-only', 'no-kms', 'advanced-read-only'])
        expect(result.detail).toContain(`${name} records no write management events of KMS`);
      expect(formatResult(result)).not.toContain('\n');
    });

    it('names the permissions when it may not look, and is not fooled by one unreadable trail', async () => {
      cloudTrail.on(DescribeTrailsCommand).rejects(accessDenied);
      expect(formatResult(await checkCloudTrail(TARGET))).toBe(
        'FAIL CloudTrail management events (eu-west-1): could not check (AccessDeniedException): run it with credentials allowed cloudtrail:DescribeTrails, cloudtrail:GetTrailStatus and cloudtrail:GetEventSelectors',
      );
      cloudTrail.reset();
      organizationTrail();
      cloudTrail.on(DescribeTrailsCommand).resolves({
        trailList: [
          trail({ Name: 'locked', TrailARN: 'locked-arn' }),
          { Name: 'org-trail', TrailARN: ORG_TRAIL, HomeRegion: 'us-east-1', IsMultiRegionTrail: true },
        ],
      });
      cloudTrail.on(GetTrailStatusCommand, { Name: 'locked-arn' }).rejects(accessDenied);
      expect((await checkCloudTrail(TARGET)).ok).toBe(true);
    });
  });

  describe('the token signing keys of a stage deployed before', () => {
    /** A stage whose keys are generation 1 (RSA, as stages were first made) and 2 as given. */
    const deployedKeys = (second: 'RSA_2048' | 'ECC_NIST_P256' | undefined) => {
      kms.on(DescribeKeyCommand, { KeyId: 'key-1' }).resolves({
        KeyMetadata: {
          KeyId: 'key-1',
          KeySpec: 'RSA_2048',
          Description: 'Signs the access tokens of the credit transfer API (RS256), generation 1',
        },
      });
      if (second !== undefined)
        kms.on(DescribeKeyCommand, { KeyId: 'key-2' }).resolves({
          KeyMetadata: {
            KeyId: 'key-2',
            KeySpec: second,
            Description: `Signs the access tokens of the credit transfer API (${second === 'RSA_2048' ? 'RS256' : 'ES256'}), generation 2`,
          },
        });
    };

    it('refuses a redeploy of an RS256 stage without signingKeyEs256FromGeneration, naming the value to set', async () => {
      deployedKeys(undefined);
      const result = await checkSigningKeys({ ...TARGET, signingKeys: { ids: ['key-1'], generation: 1 } });
      expect(formatResult(result)).toBe(
        'FAIL token signing keys: the deploy would replace generation 1 (key-1, RSA_2048) with a key of another spec, refusing every token it signed (signingKeyEs256FromGeneration not given): deploy with -c signingKeyEs256FromGeneration=2, in this and every later deploy (docs/keys.md, "Moving to ES256")',
      );
      // Named as docs/keys.md says: the same generation, or the rotation to the first ES256 key.
      for (const generation of [1, 2]) {
        const named = await checkSigningKeys({
          ...TARGET,
          signingKeys: { ids: ['key-1'], generation, es256FromGeneration: 2 },
        });
        expect(named.ok, `generation ${generation}`).toBe(true);
        expect(named.detail).toBe('kept as deployed: generation 1 RSA_2048');
      }
    });

    it('refuses a rotation that would turn a kept RSA key into ES256, and one that would turn an ES256 key into RSA', async () => {
      deployedKeys('RSA_2048');
      const rotation = await checkSigningKeys({
        ...TARGET,
        signingKeys: { ids: ['key-1', 'key-2'], generation: 3, es256FromGeneration: 2 },
      });
      expect(rotation.ok).toBe(false);
      expect(rotation.detail).toMatch(/^the deploy would replace generation 2 \(key-2, RSA_2048\) with/);
      expect(rotation.detail).toContain('-c signingKeyEs256FromGeneration=3');
      kms.reset();
      deployedKeys('ECC_NIST_P256');
      const backwards = await checkSigningKeys({
        ...TARGET,
        signingKeys: { ids: ['key-1', 'key-2'], generation: 2, es256FromGeneration: 3 },
      });
      expect(backwards.detail).toMatch(/replace generation 2 \(key-2, ECC_NIST_P256\)/);
      expect(backwards.detail).toContain('-c signingKeyEs256FromGeneration=2');
      // A generation the deploy drops (retained, never replaced) is not compared: once the RSA key
      // is two generations back, the setting may go.
      const dropped = await checkSigningKeys({
        ...TARGET,
        signingKeys: { ids: ['key-1', 'key-2'], generation: 3 },
      });
      expect(dropped.ok).toBe(true);
    });

    it('passes a first deploy, and names the permission when it may not read a key', async () => {
      expect((await checkSigningKeys(TARGET)).ok).toBe(true);
      kms.on(DescribeKeyCommand).rejects(accessDenied);
      expect(
        formatResult(await checkSigningKeys({ ...TARGET, signingKeys: { ids: ['key-1'], generation: 1 } })),
      ).toBe(
        'FAIL token signing keys: could not check (AccessDeniedException): run it with credentials allowed kms:DescribeKey on key-1',
      );
    });
  });
});
