import { APIGatewayClient, GetAccountCommand } from '@aws-sdk/client-api-gateway';
import { BackupClient, DescribeRegionSettingsCommand } from '@aws-sdk/client-backup';
import {
  type AdvancedEventSelector,
  CloudTrailClient,
  DescribeTrailsCommand,
  type EventSelector,
  GetEventSelectorsCommand,
  GetTrailStatusCommand,
  type Trail,
} from '@aws-sdk/client-cloudtrail';
import { GetRoleCommand, IAMClient } from '@aws-sdk/client-iam';
import { DescribeKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { signingKeySpec } from '../lib/constructs/signing-key.ts';

/**
 * The prerequisites of a stage's first deployment that live in the account, not in the stack,
 * each checked with one read-only call (docs/operations.md, "Deploying"). Nothing here writes.
 */

/** Lambda keeps this much of the account's concurrency unreserved, whatever is asked. */
export const LAMBDA_UNRESERVED_MINIMUM = 100;
/** The CDK bootstrap's qualifier and the oldest bootstrap version that deploys this app. */
export const BOOTSTRAP_QUALIFIER = 'hnb659fds';
export const MINIMUM_BOOTSTRAP_VERSION = 6;

export interface PreflightTarget {
  readonly stage: string;
  readonly region: string;
  readonly backupRegion?: string;
  /** The account the stage is pinned to (`-c account`): the credentials must be of it. */
  readonly account?: string;
  /** `-c keyAdminRoleArn`: the role must exist. */
  readonly keyAdminRoleArn?: string;
  /** The executions the stage reserves, all functions together (lib/operations-config.ts). */
  readonly reservedConcurrency: number;
  /**
   * A stage deployed before: its token signing keys (the stack output SigningKeyIds) and the
   * deploy's `signingKeyGeneration` and `signingKeyEs256FromGeneration`, to check that the deploy
   * keeps each key it holds as it is.
   */
  readonly signingKeys?: SigningKeysToDeploy;
  /** A named profile of the shared config files; the usual credential chain otherwise. */
  readonly profile?: string;
}

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  /** What was found; on a failure, what to do, in the same line. */
  readonly detail: string;
}

type ClientOptions = { region: string; profile?: string };
const options = (target: PreflightTarget, region = target.region): ClientOptions => ({
  region,
  ...(target.profile !== undefined && { profile: target.profile }),
});

/** The regions the stage deploys to: its own, and the backup region's recovery stack. */
const regionsOf = (target: PreflightTarget): string[] => [
  target.region,
  ...(target.backupRegion === undefined ? [] : [target.backupRegion]),
];

const errorName = (error: unknown): string =>
  error instanceof Error ? error.name || error.message : String(error);

/** A check whose call failed for another reason than the answer it looks for (no permission...). */
const couldNotCheck = (name: string, error: unknown, permission: string): CheckResult => ({
  name,
  ok: false,
  detail: `could not check (${errorName(error)}): run it with credentials allowed ${permission}`,
});

export const checkCallerAccount = async (target: PreflightTarget): Promise<CheckResult> => {
  const name = 'credentials';
  try {
    const { Account, Arn } = await new STSClient(options(target)).send(new GetCallerIdentityCommand({}));
    if (target.account !== undefined && Account !== target.account) {
      return {
        name,
        ok: false,
        detail: `${Arn} is of account ${Account}, not ${target.account}: use credentials of account ${target.account} (--profile)`,
      };
    }
    return { name, ok: true, detail: `${Arn} (account ${Account})` };
  } catch (error) {
    return couldNotCheck(name, error, 'sts:GetCallerIdentity');
  }
};

export const checkApiGatewayCloudWatchRole = async (target: PreflightTarget): Promise<CheckResult> => {
  const name = `API Gateway CloudWatch role (${target.region})`;
  try {
    const { cloudwatchRoleArn } = await new APIGatewayClient(options(target)).send(new GetAccountCommand({}));
    return cloudwatchRoleArn
      ? { name, ok: true, detail: cloudwatchRoleArn }
      : {
          name,
          ok: false,
          detail:
            'not set: the stage cannot write its API logs. Set it once per account and region (aws apigateway update-account --patch-operations op=replace,path=/cloudwatchRoleArn,value=<role ARN>), or deploy exactly one stack with -c apiGatewayCloudWatchRole=true',
        };
  } catch (error) {
    return couldNotCheck(name, error, 'apigateway:GET on /account');
  }
};

export const checkKeyAdminRole = async (target: PreflightTarget): Promise<CheckResult> => {
  const name = 'key administrator role';
  const arn = target.keyAdminRoleArn;
  if (arn === undefined) {
    return target.stage === 'prod'
      ? {
          name,
          ok: false,
          detail: 'not named: pass --key-admin-role-arn, the -c keyAdminRoleArn of the deploy',
        }
      : { name, ok: true, detail: 'none named: only the deployment administers the keys' };
  }
  const match = /^arn:aws[a-z-]*:iam::(\d{12}):role\/(?:.*\/)?([\w+=,.@-]+)$/.exec(arn);
  if (!match?.[2]) return { name, ok: false, detail: `${arn} is not an IAM role ARN: name an existing role` };
  if (target.account !== undefined && match[1] !== target.account) {
    return { name, ok: false, detail: `${arn} is a role of account ${match[1]}, not ${target.account}` };
  }
  try {
    const { Role } = await new IAMClient(options(target)).send(new GetRoleCommand({ RoleName: match[2] }));
    return Role?.Arn === arn
      ? { name, ok: true, detail: arn }
      : { name, ok: false, detail: `found ${Role?.Arn}, not ${arn}: check the role's path` };
  } catch (error) {
    if (errorName(error) === 'NoSuchEntityException' || errorName(error) === 'NoSuchEntity') {
      return {
        name,
        ok: false,
        detail: `${arn} does not exist: create it first (KMS refuses a key policy naming a role that does not exist)`,
      };
    }
    return couldNotCheck(name, error, 'iam:GetRole');
  }
};

export const checkLambdaConcurrency = async (target: PreflightTarget): Promise<CheckResult> => {
  const name = `Lambda concurrency quota (${target.region})`;
  const needed = target.reservedConcurrency + LAMBDA_UNRESERVED_MINIMUM;
  try {
    const { AccountLimit } = await new LambdaClient(options(target)).send(new GetAccountSettingsCommand({}));
    const limit = AccountLimit?.ConcurrentExecutions ?? 0;
    const unreserved = AccountLimit?.UnreservedConcurrentExecutions ?? 0;
    const detail = `limit ${limit}, ${unreserved} unreserved; the stage reserves ${target.reservedConcurrency} and Lambda keeps ${LAMBDA_UNRESERVED_MINIMUM} unreserved`;
    return limit >= needed
      ? { name, ok: true, detail }
      : {
          name,
          ok: false,
          detail: `${detail}: ask for a limit of at least ${needed} (Service Quotas, "Concurrent executions") or lower the reservedConcurrency* context values`,
        };
  } catch (error) {
    return couldNotCheck(name, error, 'lambda:GetAccountSettings');
  }
};

export const checkBackupOptIn = async (target: PreflightTarget, region: string): Promise<CheckResult> => {
  const name = `AWS Backup for DynamoDB (${region})`;
  try {
    const settings = await new BackupClient(options(target, region)).send(
      new DescribeRegionSettingsCommand({}),
    );
    const optedIn = settings.ResourceTypeOptInPreference?.DynamoDB === true;
    const advanced = settings.ResourceTypeManagementPreference?.DynamoDB === true;
    return optedIn && advanced
      ? { name, ok: true, detail: 'opted in, with AWS Backup managing DynamoDB backups' }
      : {
          name,
          ok: false,
          detail: `${optedIn ? '' : 'not opted in; '}${advanced ? '' : 'advanced DynamoDB backup off; '}run aws backup update-region-settings --region ${region} --resource-type-opt-in-preference DynamoDB=true --resource-type-management-preference DynamoDB=true`,
        };
  } catch (error) {
    return couldNotCheck(name, error, 'backup:DescribeRegionSettings');
  }
};

export const checkBootstrap = async (target: PreflightTarget, region: string): Promise<CheckResult> => {
  const name = `CDK bootstrap (${region})`;
  const bootstrap = `npx cdk bootstrap aws://${target.account ?? '<account>'}/${region}`;
  try {
    const { Parameter } = await new SSMClient(options(target, region)).send(
      new GetParameterCommand({ Name: `/cdk-bootstrap/${BOOTSTRAP_QUALIFIER}/version` }),
    );
    const version = Number(Parameter?.Value);
    return version >= MINIMUM_BOOTSTRAP_VERSION
      ? { name, ok: true, detail: `version ${version}` }
      : {
          name,
          ok: false,
          detail: `version ${Parameter?.Value}, older than ${MINIMUM_BOOTSTRAP_VERSION}: run ${bootstrap}`,
        };
  } catch (error) {
    if (errorName(error) === 'ParameterNotFound') {
      return { name, ok: false, detail: `not bootstrapped: run ${bootstrap}` };
    }
    return couldNotCheck(name, error, 'ssm:GetParameter');
  }
};

/** The KMS calls the KeyChanges alarm watches: write management events of kms.amazonaws.com. */
const KMS_SOURCE = 'kms.amazonaws.com';

/** Basic selectors: management events, write ones among them, KMS not excluded. */
const basicSelectorRecordsKeyChanges = (selector: EventSelector): boolean =>
  selector.IncludeManagementEvents !== false &&
  selector.ReadWriteType !== 'ReadOnly' &&
  !(selector.ExcludeManagementEventSources ?? []).includes(KMS_SOURCE);

/** Advanced selectors: the management category, not only read-only events, KMS not filtered out. */
const advancedSelectorRecordsKeyChanges = ({ FieldSelectors = [] }: AdvancedEventSelector): boolean => {
  const field = (name: string) => FieldSelectors.filter((selector) => selector.Field === name);
  const management = field('eventCategory').some((selector) => selector.Equals?.includes('Management'));
  const readOnly = field('readOnly').some((selector) => selector.Equals?.includes('true'));
  const kmsLeftOut = field('eventSource').some(
    (selector) =>
      selector.NotEquals?.includes(KMS_SOURCE) ||
      (selector.Equals !== undefined && !selector.Equals.includes(KMS_SOURCE)),
  );
  return management && !readOnly && !kmsLeftOut;
};

/** What one trail lacks for the KeyChanges alarm in the region, or undefined if nothing. */
const trailLack = async (
  client: CloudTrailClient,
  trail: Trail,
  region: string,
): Promise<string | undefined> => {
  if (!trail.IsMultiRegionTrail && trail.HomeRegion !== region)
    return `${trail.Name} is of ${trail.HomeRegion} only`;
  const name = trail.TrailARN ?? trail.Name;
  const status = await client.send(new GetTrailStatusCommand({ Name: name }));
  if (!status.IsLogging) return `${trail.Name} is not logging (aws cloudtrail start-logging --name ${name})`;
  const selectors = await client.send(new GetEventSelectorsCommand({ TrailName: name }));
  const records =
    (selectors.EventSelectors ?? []).some(basicSelectorRecordsKeyChanges) ||
    (selectors.AdvancedEventSelectors ?? []).some(advancedSelectorRecordsKeyChanges);
  return records
    ? undefined
    : `${trail.Name} records no write management events of KMS (aws cloudtrail put-event-selectors --trail-name ${name} --event-selectors '[{"ReadWriteType":"All","IncludeManagementEvents":true}]')`;
};

/**
 * The KeyChanges alarm (a key scheduled for deletion, disabled, or its policy put) hears KMS calls
 * through EventBridge, which gets CloudTrail's management events only where a trail records them:
 * a trail of the account or its organization, logging, covering the region, with KMS's write
 * management events. Every stage has the alarm, so every stage needs it.
 */
export const checkCloudTrail = async (target: PreflightTarget): Promise<CheckResult> => {
  const name = `CloudTrail management events (${target.region})`;
  const client = new CloudTrailClient(options(target));
  try {
    const { trailList = [] } = await client.send(new DescribeTrailsCommand({ includeShadowTrails: true }));
    const lacks: string[] = [];
    for (const trail of trailList) {
      // A trail whose status may not be read (an organization trail, say) does not hide another.
      const lack = await trailLack(client, trail, target.region).catch(
        (error: unknown) =>
          `${trail.Name} could not be read (${errorName(error)}: allow cloudtrail:GetTrailStatus and cloudtrail:GetEventSelectors)`,
      );
      if (lack === undefined)
        return {
          name,
          ok: true,
          detail: `${trail.Name}${trail.IsOrganizationTrail ? ' (organization trail)' : ''} records KMS key changes`,
        };
      lacks.push(lack);
    }
    return {
      name,
      ok: false,
      detail:
        lacks.length === 0
          ? `no trail: the KeyChanges alarm never hears a key scheduled for deletion, disabled or its policy changed. Create a multi-region trail logging management events (aws cloudtrail create-trail --name management-events --s3-bucket-name <bucket> --is-multi-region-trail, then aws cloudtrail start-logging --name management-events) or ask for the organization trail`
          : `no trail records KMS key changes here, so the KeyChanges alarm never fires: ${lacks.join('; ')}`,
    };
  } catch (error) {
    return couldNotCheck(
      name,
      error,
      'cloudtrail:DescribeTrails, cloudtrail:GetTrailStatus and cloudtrail:GetEventSelectors',
    );
  }
};

export interface SigningKeysToDeploy {
  /** The deployed stage's key ids, as its SigningKeyIds output lists them. */
  readonly ids: readonly string[];
  /** The deploy's `-c signingKeyGeneration` (1 when not given). */
  readonly generation: number;
  /** The deploy's `-c signingKeyEs256FromGeneration`, if given. */
  readonly es256FromGeneration?: number;
}

/** A key's generation, from the description the stack gives it; the first layout's only key is 1. */
const generationOf = (description: string | undefined): number =>
  Number(/generation (\d+)/.exec(description ?? '')?.[1] ?? 1);

/**
 * A KMS key cannot change its spec: a deploy that asks another spec of a generation it keeps makes
 * CloudFormation replace that key, so every token it signed is refused and the key set loses it
 * (the old key is retained, unused). A stage first deployed with RSA keys must name its first
 * ES256 generation; this reads the deployed keys (kms:DescribeKey) and names the value to set.
 */
export const checkSigningKeys = async (target: PreflightTarget): Promise<CheckResult> => {
  const name = 'token signing keys';
  const planned = target.signingKeys;
  if (planned === undefined || planned.ids.length === 0)
    return {
      name,
      ok: true,
      detail:
        'none named (a first deploy); on a stage deployed before pass --signing-key-ids, its SigningKeyIds output, to check the deploy keeps them',
    };
  const kms = new KMSClient(options(target));
  const deployed: { id: string; generation: number; keySpec: string }[] = [];
  for (const id of planned.ids) {
    try {
      const { KeyMetadata } = await kms.send(new DescribeKeyCommand({ KeyId: id }));
      deployed.push({
        id,
        generation: generationOf(KeyMetadata?.Description),
        keySpec: KeyMetadata?.KeySpec ?? 'unknown',
      });
    } catch (error) {
      return couldNotCheck(name, error, `kms:DescribeKey on ${id}`);
    }
  }
  const kept = new Set([planned.generation - 1, planned.generation]);
  const changed = deployed.filter(
    ({ generation, keySpec }) =>
      kept.has(generation) && signingKeySpec(generation, planned.es256FromGeneration).keySpec !== keySpec,
  );
  const summary = deployed.map((key) => `generation ${key.generation} ${key.keySpec}`).join(', ');
  if (changed.length === 0) return { name, ok: true, detail: `kept as deployed: ${summary}` };
  const lastRsa = Math.max(
    0,
    ...deployed.filter((key) => key.keySpec.startsWith('RSA_')).map((key) => key.generation),
  );
  const asked = planned.es256FromGeneration === undefined ? 'not given' : `=${planned.es256FromGeneration}`;
  return {
    name,
    ok: false,
    detail: `the deploy would replace ${changed.map((key) => `generation ${key.generation} (${key.id}, ${key.keySpec})`).join(' and ')} with a key of another spec, refusing every token it signed (signingKeyEs256FromGeneration ${asked}): deploy with -c signingKeyEs256FromGeneration=${lastRsa + 1}, in this and every later deploy (docs/keys.md, "Moving to ES256")`,
  };
};

/** Every check, in the order a platform engineer fixes them; none stops the others. */
export const preflight = async (target: PreflightTarget): Promise<CheckResult[]> => [
  await checkCallerAccount(target),
  ...(await Promise.all(regionsOf(target).map((region) => checkBootstrap(target, region)))),
  await checkApiGatewayCloudWatchRole(target),
  await checkKeyAdminRole(target),
  await checkLambdaConcurrency(target),
  ...(await Promise.all(regionsOf(target).map((region) => checkBackupOptIn(target, region)))),
  await checkCloudTrail(target),
  await checkSigningKeys(target),
];

/** One line per check: `ok  name: detail` or `FAIL name: detail`. */
export const formatResult = ({ name, ok, detail }: CheckResult): string =>
  `${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`;
