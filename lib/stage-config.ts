import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  DEFAULT_TENANT_RATE_LIMIT,
  MAX_TENANT_BURST,
  MAX_TENANT_RATE,
  type TenantRateLimit,
  tenantRateLimit,
} from '#domain/access/tenant-rate-limit';
import { wholeNumber } from '#shared/config';
import { contextCount, type OperationsConfig, operationsConfig } from './operations-config.ts';

/** The rail the workflow functions submit payments to. */
export type RailConfig =
  | { readonly kind: 'sandbox' }
  | {
      readonly kind: 'connector';
      /** The clearing connector's base URL (https). */
      readonly url: string;
      /** A Secrets Manager secret holding the HMAC key requests are signed with; created when absent. */
      readonly secretArn?: string;
      /**
       * The customer managed KMS key that secret is encrypted with (`-c connectorSecretKeyArn=...`):
       * its readers get `kms:Decrypt` through Secrets Manager only.
       */
      readonly secretKeyArn?: string;
    };

/** Everything that differs between stages, each with a default (docs/operations.md). */
export interface StageConfig extends OperationsConfig {
  /** Names the stack `CreditTransfers-<stage>` and the API stage. */
  readonly stage: string;
  readonly rail: RailConfig;
  /** The tokens' `iss`: a stable name, never the API id or stage path. */
  readonly issuer: string;
  readonly audience: string;
  /** A WAF web ACL in front of the API stage. */
  readonly waf: boolean;
  /** Where alarms are mailed; the topic and alarms exist without it. */
  readonly alarmEmail?: string;
  readonly customDomain?: { readonly domainName: string; readonly certificateArn: string };
  /** Encrypt the table with a customer managed KMS key instead of the AWS managed one (`prod`'s default). */
  readonly tableCustomerManagedKey: boolean;
  /**
   * The role that administers every KMS key of the stage (`-c keyAdminRoleArn=...`, required on
   * `prod`). Without it (other stages) only the deployment administers them (lib/constructs/key-policy.ts).
   */
  readonly keyAdminRoleArn?: string;
  /**
   * The account the stage lives in (`-c account=...`, required on `prod`): the stack's
   * `env.account`, so credentials of another account fail `cdk deploy`.
   */
  readonly account?: string;
  /**
   * The region the stage lives in (`-c region=...`, required on `prod`): the stack's `env.region`,
   * so credentials or a profile of another region fail `cdk deploy`.
   */
  readonly region?: string;
  readonly logRetention: RetentionDays;
  /** Set the account's API Gateway CloudWatch role (an account-wide setting) from this stack. */
  readonly apiGatewayCloudWatchRole: boolean;
  /** Raising it adds a new token signing key (and drops the one two generations back, retained); see docs/keys.md. */
  readonly signingKeyGeneration: number;
  /**
   * The first signing key generation that is ES256 (`-c signingKeyEs256FromGeneration=N`); earlier
   * ones stay RS256. Absent: 1, ES256 from the first key. A stage whose deployed keys are RS256
   * names the generation after them (a deployed key's spec cannot change). docs/keys.md.
   */
  readonly signingKeyEs256FromGeneration?: number;
  /** The AWS SDK's FIPS and dual-stack endpoints for every function's AWS calls (docs/aws-sdk.md). */
  readonly awsEndpoints: AwsEndpointSettings;
  /** Warm instances per latency-critical function group; 0 (the default) is none (docs/aws-sdk.md). */
  readonly provisionedConcurrency: ProvisionedConcurrency;
  /** Client secrets accepted at the token endpoint (`-c clientSecrets=false`: private_key_jwt only). */
  readonly clientSecrets: boolean;
  /** Every access token DPoP-bound (`-c requireDpop=true`). */
  readonly requireDpop: boolean;
  /** DPoP proofs at the token endpoint must carry a server nonce (`-c dpopNonces=true`, RFC 9449 8). */
  readonly dpopNonces: boolean;
  /** A second region for copies (`-c backupRegion=...`): the signing keys are replicated there. */
  readonly backupRegion?: string;
  /** Share of API requests and workflow executions X-Ray traces (`-c xraySamplingRate=0.05`). */
  readonly xraySamplingRate: number;
  /** What the workflow writes to its execution log (`-c workflowLogLevel=ALL|ERROR|FATAL|OFF`), never execution data. */
  readonly workflowLogLevel: WorkflowLogLevel;
  /**
   * Each tenant's requests per second and burst unless it has a limit of its own
   * (`-c tenantRateLimit=25 -c tenantBurstLimit=50`, the default; burst twice the rate unless given).
   */
  readonly tenantRateLimit: TenantRateLimit;
}

export const WORKFLOW_LOG_LEVELS = ['ALL', 'ERROR', 'FATAL', 'OFF'] as const;
export type WorkflowLogLevel = (typeof WORKFLOW_LOG_LEVELS)[number];

export interface AwsEndpointSettings {
  readonly fips: boolean;
  readonly dualStack: boolean;
}

/** The function groups a client waits on first: the authorizer, the initiation, the status read. */
export const PROVISIONED_CONCURRENCY_GROUPS = ['authorizer', 'initiation', 'status'] as const;
export type ProvisionedConcurrencyGroup = (typeof PROVISIONED_CONCURRENCY_GROUPS)[number];
export type ProvisionedConcurrency = Readonly<Record<ProvisionedConcurrencyGroup, number>>;

/** The context value of a group: `provisionedConcurrencyAuthorizer`, and so on. */
export const provisionedConcurrencyContext = (group: ProvisionedConcurrencyGroup): string =>
  `provisionedConcurrency${group.charAt(0).toUpperCase()}${group.slice(1)}`;

export const PRODUCTION_STAGE = 'prod';
export const DEFAULT_STAGE = 'dev';
export const DEFAULT_AUDIENCE = 'credit-transfers';

/** Reads one context value; `cdk -c name=value` always gives strings. */
export type ContextReader = (name: string) => unknown;

/**
 * The stage's settings from CDK context. Each refusal is one line naming the context value to fix,
 * so `cdk synth` fails with a reason rather than a broken stack.
 */
export const stageConfig = (context: ContextReader): StageConfig => {
  const text = (name: string): string | undefined => {
    const value = context(name);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string' && typeof value !== 'boolean' && typeof value !== 'number') {
      throw new Error(`Context ${name} must be a string`);
    }
    return String(value);
  };
  const flag = (name: string, fallback: boolean): boolean => {
    const value = text(name);
    if (value === undefined) return fallback;
    if (value !== 'true' && value !== 'false')
      throw new Error(`Context ${name} must be true or false; got ${value}`);
    return value === 'true';
  };

  const stage = text('stage') ?? DEFAULT_STAGE;
  // Lower case: the stage names CloudFormation stacks, log groups and the API stage alike.
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
    throw new Error(
      `Context stage must be 1-20 lower-case letters, digits or -, starting with a letter; got ${stage}`,
    );
  }
  const production = stage === PRODUCTION_STAGE;

  const connectorUrl = text('connectorUrl');
  if (connectorUrl !== undefined && !isHttpsUrl(connectorUrl)) {
    throw new Error(`Context connectorUrl must be an https:// URL; got ${connectorUrl}`);
  }
  const connectorSecretArn = text('connectorSecretArn');
  if (
    connectorSecretArn !== undefined &&
    !/^arn:aws[a-z-]*:secretsmanager:[^:]+:\d{12}:secret:.+$/.test(connectorSecretArn)
  ) {
    throw new Error(
      `Context connectorSecretArn must be a Secrets Manager secret ARN; got ${connectorSecretArn}`,
    );
  }
  const connectorSecretKeyArn = text('connectorSecretKeyArn');
  if (
    connectorSecretKeyArn !== undefined &&
    !/^arn:aws[a-z-]*:kms:[^:]+:\d{12}:key\/[0-9a-f-]{36}$/.test(connectorSecretKeyArn)
  ) {
    throw new Error(`Context connectorSecretKeyArn must be a KMS key ARN; got ${connectorSecretKeyArn}`);
  }
  if (connectorSecretKeyArn !== undefined && connectorSecretArn === undefined) {
    throw new Error(
      'Context connectorSecretKeyArn needs connectorSecretArn: it names the key of a secret the stage is given',
    );
  }
  // The sandbox settles nothing: production takes it only when asked for by name.
  const sandbox = flag('sandbox', !production && connectorUrl === undefined);
  if (!sandbox && connectorUrl === undefined) {
    throw new Error(
      `Stage ${stage} runs the connector rail and needs -c connectorUrl=https://... (or -c sandbox=true for a stage that settles nothing)`,
    );
  }
  if (sandbox && connectorUrl !== undefined) {
    throw new Error('Context sandbox=true and connectorUrl exclude each other: a stage runs one rail');
  }

  const domainName = text('domainName');
  const certificateArn = text('certificateArn');
  if ((domainName === undefined) !== (certificateArn === undefined)) {
    throw new Error(
      'Context domainName and certificateArn go together: the custom domain needs its certificate',
    );
  }
  if (
    domainName !== undefined &&
    !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(domainName)
  ) {
    throw new Error(`Context domainName must be a lower-case DNS name; got ${domainName}`);
  }
  if (
    certificateArn !== undefined &&
    !/^arn:aws[a-z-]*:acm:[^:]+:\d{12}:certificate\/.+$/.test(certificateArn)
  ) {
    throw new Error(`Context certificateArn must be an ACM certificate ARN; got ${certificateArn}`);
  }

  // prod's tokens name a domain the bank owns, and nothing reaches the API around it; a prod
  // without one (a rehearsal) says so by name.
  const noCustomDomain = flag('noCustomDomain', false);
  if (noCustomDomain && domainName !== undefined) {
    throw new Error('Context noCustomDomain=true and domainName exclude each other');
  }

  const issuer = text('issuer') ?? defaultIssuer(stage, domainName);
  if (!isHttpsUrl(issuer) || /execute-api/.test(issuer)) {
    throw new Error(
      `Context issuer must be a stable https:// URL that does not name the API id; got ${issuer}`,
    );
  }

  const alarmEmail = text('alarmEmail');
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail)) {
    throw new Error(`Context alarmEmail must be an e-mail address; got ${alarmEmail}`);
  }

  const retentionText = text('logRetentionDays');
  const logRetention =
    retentionText === undefined
      ? production
        ? RetentionDays.ONE_YEAR
        : RetentionDays.THREE_MONTHS
      : retentionDays(retentionText);

  const backupRegion = text('backupRegion');
  if (backupRegion !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d$/.test(backupRegion)) {
    throw new Error(
      `Context backupRegion must be an AWS region name such as eu-central-1; got ${backupRegion}`,
    );
  }

  // Someone to page comes first: a stage that pages no one is the older, plainer mistake.
  const operations = operationsConfig({
    text,
    stage,
    production,
    alarmEmail,
    customDomain: domainName !== undefined,
  });
  const account = text('account');
  if (account !== undefined && !/^\d{12}$/.test(account)) {
    throw new Error(`Context account must be a 12-digit AWS account id; got ${account}`);
  }
  if (production && account === undefined) {
    throw new Error(
      `Stage ${stage} needs -c account=<12-digit id>: the account it is pinned to, so credentials of another account cannot deploy it`,
    );
  }
  const region = text('region');
  if (region !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) {
    throw new Error(`Context region must be an AWS region name such as eu-west-1; got ${region}`);
  }
  if (production && region === undefined) {
    throw new Error(
      `Stage ${stage} needs -c region=<region>: the region it is pinned to, so credentials or a profile of another region cannot deploy it`,
    );
  }
  if (region !== undefined && backupRegion === region) {
    throw new Error(`Context backupRegion must be another region than region ${region}`);
  }
  const keyAdminRoleArn = text('keyAdminRoleArn');
  const keyAdminRole =
    keyAdminRoleArn && /^arn:aws[a-z-]*:iam::(\d{12}):role\/[\w+=,.@/-]{1,512}$/.exec(keyAdminRoleArn);
  if (keyAdminRoleArn !== undefined && !keyAdminRole) {
    throw new Error(`Context keyAdminRoleArn must be an IAM role ARN; got ${keyAdminRoleArn}`);
  }
  if (production && keyAdminRoleArn === undefined) {
    throw new Error(
      `Stage ${stage} needs -c keyAdminRoleArn=arn:aws:iam::<account>:role/<name>: the role that administers its KMS keys, in place of the account root`,
    );
  }
  if (keyAdminRole && account !== undefined && keyAdminRole[1] !== account) {
    throw new Error(`Context keyAdminRoleArn must be a role of account ${account}; got ${keyAdminRoleArn}`);
  }

  if (production && domainName === undefined && !noCustomDomain) {
    throw new Error(
      `Stage ${stage} needs -c domainName=<name> -c certificateArn=<ACM ARN>: its issuer and only endpoint (or -c noCustomDomain=true for a stage that has none, issuer under .invalid)`,
    );
  }

  return {
    stage,
    ...(account !== undefined && { account }),
    ...(region !== undefined && { region }),
    ...(keyAdminRoleArn !== undefined && { keyAdminRoleArn }),
    rail: sandbox
      ? { kind: 'sandbox' }
      : {
          kind: 'connector',
          url: connectorUrl as string,
          ...(connectorSecretArn !== undefined && { secretArn: connectorSecretArn }),
          ...(connectorSecretKeyArn !== undefined && { secretKeyArn: connectorSecretKeyArn }),
        },
    issuer,
    audience: text('audience') ?? DEFAULT_AUDIENCE,
    waf: flag('waf', production),
    ...(alarmEmail !== undefined && { alarmEmail }),
    ...(domainName !== undefined &&
      certificateArn !== undefined && { customDomain: { domainName, certificateArn } }),
    tableCustomerManagedKey: flag('tableCmk', production),
    logRetention,
    apiGatewayCloudWatchRole: flag('apiGatewayCloudWatchRole', false),
    signingKeyGeneration: contextCount(text('signingKeyGeneration') ?? '1', 'signingKeyGeneration'),
    ...(text('signingKeyEs256FromGeneration') !== undefined && {
      signingKeyEs256FromGeneration: contextCount(
        text('signingKeyEs256FromGeneration') as string,
        'signingKeyEs256FromGeneration',
      ),
    }),
    clientSecrets: flag('clientSecrets', true),
    requireDpop: flag('requireDpop', false),
    dpopNonces: flag('dpopNonces', false),
    awsEndpoints: { fips: flag('fipsEndpoints', false), dualStack: flag('dualStackEndpoints', false) },
    provisionedConcurrency: Object.fromEntries(
      PROVISIONED_CONCURRENCY_GROUPS.map((group) => {
        const name = provisionedConcurrencyContext(group);
        return [group, instanceCount(text(name) ?? '0', name)];
      }),
    ) as ProvisionedConcurrency,
    ...(backupRegion !== undefined && { backupRegion }),
    // prod: one request or execution in twenty, and only failures in the execution log; other
    // stages trace and log everything, where a developer wants every step.
    xraySamplingRate: samplingRate(text('xraySamplingRate') ?? (production ? '0.05' : '1')),
    workflowLogLevel: workflowLogLevel(text('workflowLogLevel') ?? (production ? 'ERROR' : 'ALL')),
    tenantRateLimit: contextTenantRateLimit(text('tenantRateLimit'), text('tenantBurstLimit')),
    ...operations,
  };
};

const contextTenantRateLimit = (rate: string | undefined, burst: string | undefined): TenantRateLimit => {
  const ratePerSecond =
    rate === undefined
      ? DEFAULT_TENANT_RATE_LIMIT.ratePerSecond
      : wholeNumber('Context tenantRateLimit', rate, { min: 1, max: MAX_TENANT_RATE });
  const burstLimit =
    burst !== undefined
      ? wholeNumber('Context tenantBurstLimit', burst, { min: 1, max: MAX_TENANT_BURST })
      : rate === undefined
        ? DEFAULT_TENANT_RATE_LIMIT.burst
        : Math.min(MAX_TENANT_BURST, 2 * ratePerSecond);
  return tenantRateLimit(ratePerSecond, burstLimit);
};

/**
 * The custom domain when there is one; otherwise a name of the stage under `.invalid` (RFC 2606),
 * which no one can own. Neither changes when the API is redeployed or its stage renamed.
 */
export const defaultIssuer = (stage: string, domainName?: string): string =>
  `https://${domainName ?? `credit-transfers-${stage}.invalid`}`;

const samplingRate = (value: string): number => {
  const rate = Number(value);
  if (!/^(0|1|0?\.\d+|1\.0+)$/.test(value) || rate < 0 || rate > 1) {
    throw new Error(`Context xraySamplingRate must be a share from 0 to 1, such as 0.05; got ${value}`);
  }
  return rate;
};

const workflowLogLevel = (value: string): WorkflowLogLevel => {
  if (!(WORKFLOW_LOG_LEVELS as readonly string[]).includes(value)) {
    throw new Error(
      `Context workflowLogLevel must be one of ${WORKFLOW_LOG_LEVELS.join(', ')}; got ${value}`,
    );
  }
  return value as WorkflowLogLevel;
};

/** 0 is off. */
const instanceCount = (value: string, name: string): number =>
  wholeNumber(`Context ${name}`, value, { min: 0, max: 9999 });

const isHttpsUrl = (value: string): boolean => {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
};

const retentionDays = (value: string): RetentionDays => {
  const days = Number(value);
  const allowed = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number');
  if (!allowed.includes(days) || days === RetentionDays.INFINITE) {
    throw new Error(
      `Context logRetentionDays must be one of ${allowed.filter((d) => d > 0).join(', ')}; got ${value}`,
    );
  }
  return days as RetentionDays;
};
