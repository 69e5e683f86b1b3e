import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The IAM policies of the stack's functions, as the synthesized template gives them: each
 * function's role policies, and the resource policies (key policies, event bus and queue
 * policies, a table's or a secret's resource policy) wherever the stack defines them. The
 * template is synthesized from lib/ (the same bindings that deploy), by scripts/local/iam-synth.ts
 * in a process of its own, and kept in a cache file with the hash of every project file the
 * synthesis loaded: a change to any of them synthesizes again, so the cache never goes stale.
 */

const PROJECT_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The local runtime's fixed account and region (ARNs, the API's method ARNs). */
export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'local';
/** The local state machines' names (scripts/local/workflow-runner.ts): the fast path (EXPRESS) and the one of long waits (STANDARD). */
export const LOCAL_STATE_MACHINE_NAME = 'credit-transfer-lifecycle';
export const LOCAL_LONG_WAITS_STATE_MACHINE_NAME = 'credit-transfer-lifecycle-long-waits';
/** The fast path's role, checked as a function's is when it starts an execution of long waits or invokes a task. */
export const LOCAL_FAST_PATH_ROLE = 'LifecycleFastPath';
/** The role of the state machine of long waits, checked when it invokes a task. */
export const LOCAL_LONG_WAITS_ROLE = 'LifecycleLongWaits';
/** The role a schedule (EventBridge Scheduler) invokes its target with: `<target function>Schedule`. */
export const scheduleRoleName = (functionName: string): string => `${functionName}Schedule`;

/**
 * The stage whose policies the local runtime enforces: LOCAL_IAM_STAGE, by default `prod` (the
 * one that moves money; `dev` differs in its KMS keys and settings, docs/decisions.md).
 */
export const iamStage = (): string => process.env.LOCAL_IAM_STAGE || 'prod';

/** The rail this process's functions run on, as lambdas/adapters/credit-transfers/rail.ts reads it. */
export const localRail = (): 'sandbox' | 'connector' =>
  (process.env.RAIL ?? (process.env.CONNECTOR_URL ? 'connector' : 'sandbox')) === 'connector'
    ? 'connector'
    : 'sandbox';

/**
 * The CDK context a stage is synthesized with for the local check: the rail the local functions
 * run on (the sandbox's clearing records or the connector's secret are different grants), and for
 * `prod` what it requires, pinned to the local account so every ARN is one the local check names.
 */
export const stageContext = (
  stage: string,
  rail: 'sandbox' | 'connector' = localRail(),
): Record<string, string> => ({
  stage,
  ...(rail === 'connector' ? { connectorUrl: 'https://connector.local.invalid' } : { sandbox: 'true' }),
  ...(stage === 'prod' && {
    account: LOCAL_ACCOUNT,
    // Required on prod, read by the app's env only: this synthesis names no env, so the local
    // resolver writes every ARN in the local region.
    region: 'eu-west-1',
    noCustomDomain: 'true',
    keyAdminRoleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/key-admin`,
    alarmEmail: 'oncall@local.invalid',
  }),
});

const CACHE_DIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'credit-transfers');

/** The cache file of a stage's policies, synthesized with `stageContext(stage, rail)`. */
export const iamCacheFile = (
  stage: string = iamStage(),
  rail: 'sandbox' | 'connector' = localRail(),
): string => join(CACHE_DIR, `iam-stack-${stage}-${rail}.json`);
/**
 * Where every local run records its IAM decisions, a file per process (so runs of separate test
 * files add up), unless LOCAL_IAM_DECISIONS_DIR says otherwise. `npm run iam:report` reads them all.
 */
export const IAM_DECISIONS_DIR = join(CACHE_DIR, 'iam-decisions');

export const decisionsDir = (): string => process.env.LOCAL_IAM_DECISIONS_DIR || IAM_DECISIONS_DIR;

/**
 * The stack's policies' version: a hash of the synthesized template. A decision records it, and
 * the report counts only the current version's (a statement's index means nothing in another).
 */
export const policiesVersion = (cache: IamCache): string =>
  createHash('sha256').update(JSON.stringify(cache.resources)).digest('hex').slice(0, 16);

type Json = unknown;
interface CfnResource {
  Type: string;
  Properties?: Record<string, Json>;
}
export interface IamCache {
  /** Every project file the synthesis loaded, relative to the project root, with its sha256. */
  inputs: Record<string, string>;
  /** Each function's role, by the function's name in the stack. */
  functions: Record<string, string>;
  resources: Record<string, CfnResource>;
}

export interface PolicyDocument {
  Version?: string;
  Statement: Record<string, Json>[];
}

export interface FunctionPolicies {
  roleArn: string;
  roleName: string;
  identityPolicies: { name: string; policy: PolicyDocument }[];
}

export interface StackPolicies {
  functions: Record<string, FunctionPolicies>;
  /** Resource policies by the ARN of the resource they are attached to. */
  resourcePolicies: Record<string, PolicyDocument>;
  /** Every table of the stack, by name (for their index ARNs' policies). */
  tables: string[];
  /**
   * What the local stand-ins play (scripts/local/iam-enforcement.ts), as local ARNs: by the
   * environment variable that names the resource to a function (`WEBHOOK_SECRET_KEY_ID`...), and
   * by `EVENT_SOURCE_QUEUE:<function>` the queue a function's event source mapping reads.
   */
  standIns: Record<string, string>;
  /** Each function's ARN, by its name in the stack. */
  functionArns: Record<string, string>;
  /** How the stack's services call its functions and queues (checked locally as on AWS). */
  services: ServicePaths;
}

/**
 * The calls AWS services make on the stack's behalf, each authorized by a service role (a state
 * machine's, a schedule's) or by the resource policy of what is called (a function's permissions,
 * a queue's policy).
 */
export interface ServicePaths {
  /** Per state machine (EXPRESS: the fast path; STANDARD: long waits): its role's name and its tasks' functions by substitution. */
  stateMachines: Partial<Record<'EXPRESS' | 'STANDARD', { role: string; tasks: Record<string, string> }>>;
  /** The API's execute-api ARN up to its stage (`arn:aws:execute-api:<region>:<account>:<api>/<stage>`), and the authorizer's. */
  api?: { stageArn: string; authorizerArn: string; authorizerFunction: string };
  /** Every EventBridge rule's targets: the rule's ARN and, per target, its ARN and any role it is sent with. */
  rules: { ruleArn: string; targets: { arn: string; role?: string }[] }[];
  /** Every EventBridge Scheduler schedule: its ARN, its target's ARN and the role it invokes it with. */
  schedules: { scheduleArn: string; targetArn: string; role?: string }[];
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/** The files whose change makes a new synthesis needed, besides those it loads. */
export const ALWAYS_INPUTS = ['cdk.json', 'package-lock.json'];

const isFresh = (cache: IamCache): boolean =>
  Object.entries(cache.inputs).every(([file, hash]) => {
    const path = join(PROJECT_ROOT, file);
    return existsSync(path) && sha256(path) === hash;
  });

const readCache = (file: string): IamCache | undefined => {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as IamCache;
  } catch {
    return undefined;
  }
};

const synthEnvironment = (): NodeJS.ProcessEnv => {
  const { AWS_LAMBDA_MAX_CONCURRENCY: _perInvocation, ...environment } = process.env;
  return environment;
};

/**
 * A stage's IAM (by default the one the local runtime enforces, iamStage()) as of the project's
 * files now: from the cache when none of its inputs changed, else synthesized again (seconds to
 * tens of seconds; said on stderr).
 */
export const stackIam = (
  stage: string = iamStage(),
  rail: 'sandbox' | 'connector' = localRail(),
): IamCache => {
  const file = iamCacheFile(stage, rail);
  const cached = readCache(file);
  if (cached !== undefined && isFresh(cached)) return cached;
  process.stderr.write(
    `IAM: synthesizing the ${stage} stack to read its policies (lib/ or its inputs changed)...\n`,
  );
  mkdirSync(dirname(file), { recursive: true });
  const synth = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(PROJECT_ROOT, 'scripts', 'local', 'iam-synth.ts'),
      file,
      JSON.stringify(stageContext(stage, rail)),
    ],
    // Without the local runtime's AWS_LAMBDA_MAX_CONCURRENCY: the synth loads Powertools outside
    // any invocation, which it refuses while that is set.
    { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'], env: synthEnvironment() },
  );
  if (synth.status !== 0) throw new Error(`IAM: the stack did not synthesize:\n${synth.stderr}`);
  const made = readCache(file);
  if (made === undefined) throw new Error(`IAM: ${file} was not written`);
  return made;
};

export interface LocalNames {
  /** The local table's name (TABLE_NAME): the stack's table is that table here. */
  tableName: string;
  account?: string;
  region?: string;
}

const SERVICE_OF_TYPE = (type: string): string => type.split('::')[1]?.toLowerCase() ?? 'unknown';

/** Resolves the template's intrinsic functions with local names: ARNs in the local account and region. */
class Resolver {
  readonly account: string;
  readonly region: string;

  constructor(
    private readonly resources: Record<string, CfnResource>,
    private readonly names: LocalNames,
  ) {
    this.account = names.account ?? LOCAL_ACCOUNT;
    this.region = names.region ?? LOCAL_REGION;
  }

  nameOf(logicalId: string): string {
    const resource = this.resources[logicalId];
    if (resource === undefined) throw new Error(`IAM: the template has no resource ${logicalId}`);
    if (resource.Type === 'AWS::DynamoDB::Table' || resource.Type === 'AWS::DynamoDB::GlobalTable')
      return this.names.tableName;
    if (resource.Type === 'AWS::StepFunctions::StateMachine')
      return resource.Properties?.StateMachineType === 'EXPRESS'
        ? LOCAL_STATE_MACHINE_NAME
        : LOCAL_LONG_WAITS_STATE_MACHINE_NAME;
    const properties = resource.Properties ?? {};
    for (const property of [
      'Name',
      'QueueName',
      'FunctionName',
      'RoleName',
      'TopicName',
      'LogGroupName',
      'StageName',
    ]) {
      if (typeof properties[property] === 'string') return properties[property] as string;
    }
    return logicalId;
  }

  arnOf(logicalId: string): string {
    const type = this.resources[logicalId]?.Type ?? '';
    const name = this.nameOf(logicalId);
    const { account, region } = this;
    switch (type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        return `arn:aws:dynamodb:${region}:${account}:table/${name}`;
      case 'AWS::KMS::Key':
        return `arn:aws:kms:${region}:${account}:key/${name}`;
      case 'AWS::Events::EventBus':
        return `arn:aws:events:${region}:${account}:event-bus/${name}`;
      case 'AWS::Events::Rule':
        return `arn:aws:events:${region}:${account}:rule/${name}`;
      case 'AWS::StepFunctions::StateMachine':
        return `arn:aws:states:${region}:${account}:stateMachine:${name}`;
      case 'AWS::SQS::Queue':
        return `arn:aws:sqs:${region}:${account}:${name}`;
      case 'AWS::IAM::Role':
        return `arn:aws:iam::${account}:role/${name}`;
      case 'AWS::Lambda::Function':
        return `arn:aws:lambda:${region}:${account}:function:${name}`;
      case 'AWS::Logs::LogGroup':
        return `arn:aws:logs:${region}:${account}:log-group:${name}:*`;
      case 'AWS::SecretsManager::Secret':
        return `arn:aws:secretsmanager:${region}:${account}:secret:${name}`;
      case 'AWS::SNS::Topic':
        return `arn:aws:sns:${region}:${account}:${name}`;
      default:
        return `arn:aws:${SERVICE_OF_TYPE(type)}:${region}:${account}:${name}`;
    }
  }

  refOf(logicalId: string): string {
    const type = this.resources[logicalId]?.Type ?? '';
    if (['AWS::StepFunctions::StateMachine', 'AWS::SecretsManager::Secret', 'AWS::SNS::Topic'].includes(type))
      return this.arnOf(logicalId);
    if (type === 'AWS::SQS::Queue')
      return `https://sqs.${this.region}.amazonaws.com/${this.account}/${this.nameOf(logicalId)}`;
    return this.nameOf(logicalId);
  }

  private pseudo(name: string): string | undefined {
    switch (name) {
      case 'AWS::AccountId':
        return this.account;
      case 'AWS::Region':
        return this.region;
      case 'AWS::Partition':
        return 'aws';
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
      case 'AWS::StackName':
        return 'local';
      default:
        return undefined;
    }
  }

  private ref(name: string): string {
    return this.pseudo(name) ?? this.refOf(name);
  }

  private getAtt(logicalId: string, attribute: string): string {
    if (attribute === 'Arn') return this.arnOf(logicalId);
    return `${this.nameOf(logicalId)}.${attribute}`;
  }

  resolve(value: Json): Json {
    if (Array.isArray(value)) return value.map((item) => this.resolve(item));
    if (value === null || typeof value !== 'object') return value;
    const object = value as Record<string, Json>;
    const keys = Object.keys(object);
    if (keys.length === 1) {
      const [key] = keys as [string];
      const argument = object[key];
      switch (key) {
        case 'Ref':
          return this.ref(argument as string);
        case 'Fn::GetAtt': {
          const [logicalId, attribute] =
            typeof argument === 'string'
              ? (argument.split('.') as [string, string])
              : (argument as [string, string]);
          return this.getAtt(logicalId, attribute);
        }
        case 'Fn::Join': {
          const [separator, parts] = argument as [string, Json[]];
          return (this.resolve(parts) as Json[]).join(separator);
        }
        case 'Fn::Select': {
          const [index, list] = argument as [Json, Json];
          return (this.resolve(list) as Json[])[Number(this.resolve(index))];
        }
        case 'Fn::Split': {
          const [separator, text] = argument as [string, Json];
          return String(this.resolve(text)).split(separator);
        }
        case 'Fn::Sub': {
          const [template, variables] =
            typeof argument === 'string' ? [argument, {}] : (argument as [string, Record<string, Json>]);
          return template.replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
            if (name in variables) return String(this.resolve(variables[name]));
            const [logicalId, attribute] = name.split('.') as [string, string | undefined];
            return attribute === undefined ? this.ref(logicalId) : this.getAtt(logicalId, attribute);
          });
        }
        default:
          if (key.startsWith('Fn::')) throw new Error(`IAM: ${key} in a policy is not resolved locally`);
      }
    }
    return Object.fromEntries(keys.map((key) => [key, this.resolve(object[key])]));
  }
}

const asDocument = (value: Json): PolicyDocument => {
  const document = value as PolicyDocument;
  return { ...document, Statement: [document.Statement].flat() };
};

const mergeInto = (policies: Record<string, PolicyDocument>, arn: string, document: PolicyDocument): void => {
  const existing = policies[arn];
  policies[arn] = existing
    ? { ...existing, Statement: [...existing.Statement, ...document.Statement] }
    : { Version: '2012-10-17', ...document };
};

/** Every function's identity policies and every resource policy of the stack, with local ARNs. */
export const stackPolicies = (cache: IamCache, names: LocalNames): StackPolicies => {
  const resolver = new Resolver(cache.resources, names);
  const entries = Object.entries(cache.resources);
  const rolePolicies = (name: string, roleId: string): FunctionPolicies => {
    const role = cache.resources[roleId];
    if (role?.Type !== 'AWS::IAM::Role')
      throw new Error(`IAM: ${name}'s role ${roleId} is not in the template`);
    if (role.Properties?.ManagedPolicyArns !== undefined)
      throw new Error(`IAM: ${name}'s role has managed policies, which are not read locally`);
    const identityPolicies: FunctionPolicies['identityPolicies'] = [];
    for (const inline of (role.Properties?.Policies ?? []) as { PolicyName: string; PolicyDocument: Json }[])
      identityPolicies.push({
        name: inline.PolicyName,
        policy: asDocument(resolver.resolve(inline.PolicyDocument)),
      });
    for (const [logicalId, resource] of entries) {
      if (resource.Type !== 'AWS::IAM::Policy' && resource.Type !== 'AWS::IAM::ManagedPolicy') continue;
      const roles = (resource.Properties?.Roles ?? []) as Json[];
      if (!roles.some((r) => (r as { Ref?: string }).Ref === roleId)) continue;
      identityPolicies.push({
        name: logicalId,
        policy: asDocument(resolver.resolve(resource.Properties?.PolicyDocument)),
      });
    }
    return { roleArn: resolver.arnOf(roleId), roleName: resolver.nameOf(roleId), identityPolicies };
  };
  const functions: Record<string, FunctionPolicies> = {};
  for (const [functionName, roleId] of Object.entries(cache.functions))
    functions[functionName] = rolePolicies(functionName, roleId);
  const services = servicePaths(cache, resolver);
  // The service roles the template gives (state machines', schedules'), checked as a function's are.
  for (const [name, roleId] of Object.entries(services.roles)) functions[name] ??= rolePolicies(name, roleId);

  const resourcePolicies: Record<string, PolicyDocument> = {};
  const tables: string[] = [];
  const queueArnOfUrl = new Map(
    entries
      .filter(([, resource]) => resource.Type === 'AWS::SQS::Queue')
      .map(([logicalId]) => [resolver.refOf(logicalId), resolver.arnOf(logicalId)]),
  );
  const busArnOfName = (name: string): string =>
    name.startsWith('arn:')
      ? name
      : `arn:aws:events:${names.region ?? LOCAL_REGION}:${names.account ?? LOCAL_ACCOUNT}:event-bus/${name}`;
  for (const [logicalId, resource] of entries) {
    const properties = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::KMS::Key':
        if (properties.KeyPolicy !== undefined)
          mergeInto(
            resourcePolicies,
            resolver.arnOf(logicalId),
            asDocument(resolver.resolve(properties.KeyPolicy)),
          );
        break;
      case 'AWS::DynamoDB::Table': {
        tables.push(resolver.nameOf(logicalId));
        const policy = (properties.ResourcePolicy as { PolicyDocument?: Json } | undefined)?.PolicyDocument;
        if (policy !== undefined)
          mergeInto(resourcePolicies, resolver.arnOf(logicalId), asDocument(resolver.resolve(policy)));
        break;
      }
      case 'AWS::DynamoDB::GlobalTable': {
        tables.push(resolver.nameOf(logicalId));
        for (const replica of (properties.Replicas ?? []) as {
          ResourcePolicy?: { PolicyDocument?: Json };
        }[]) {
          const policy = replica.ResourcePolicy?.PolicyDocument;
          if (policy !== undefined)
            mergeInto(resourcePolicies, resolver.arnOf(logicalId), asDocument(resolver.resolve(policy)));
        }
        break;
      }
      case 'AWS::Events::EventBus':
        if (properties.Policy !== undefined)
          mergeInto(
            resourcePolicies,
            resolver.arnOf(logicalId),
            asDocument(resolver.resolve(properties.Policy)),
          );
        break;
      case 'AWS::Events::EventBusPolicy': {
        const resolved = resolver.resolve(properties) as Record<string, Json>;
        const bus = busArnOfName(String(resolved.EventBusName ?? 'default'));
        const statement = (resolved.Statement as Record<string, Json> | undefined) ?? {
          Effect: 'Allow',
          Principal: { AWS: resolved.Principal },
          Action: resolved.Action,
          Resource: bus,
          ...(resolved.Condition !== undefined && { Condition: resolved.Condition }),
        };
        mergeInto(resourcePolicies, bus, {
          Statement: [{ Sid: resolved.StatementId, ...statement } as Record<string, Json>],
        });
        break;
      }
      case 'AWS::SQS::QueuePolicy': {
        const document = asDocument(resolver.resolve(properties.PolicyDocument));
        for (const url of resolver.resolve(properties.Queues) as string[])
          mergeInto(resourcePolicies, queueArnOfUrl.get(url) ?? url, document);
        break;
      }
      case 'AWS::Lambda::Permission': {
        // Lambda's own policy statement for an AddPermission, as it writes it.
        const resolved = resolver.resolve(properties) as Record<string, Json>;
        const principal = String(resolved.Principal);
        const conditions: Record<string, Record<string, Json>> = {};
        if (resolved.SourceArn !== undefined) conditions.ArnLike = { 'AWS:SourceArn': resolved.SourceArn };
        if (resolved.SourceAccount !== undefined)
          conditions.StringEquals = { 'AWS:SourceAccount': resolved.SourceAccount };
        mergeInto(resourcePolicies, String(resolved.FunctionName), {
          Statement: [
            {
              Sid: logicalId,
              Effect: 'Allow',
              Principal: principal.endsWith('.amazonaws.com') ? { Service: principal } : { AWS: principal },
              Action: resolved.Action,
              Resource: resolved.FunctionName,
              ...(Object.keys(conditions).length > 0 && { Condition: conditions }),
            },
          ],
        });
        break;
      }
      case 'AWS::SecretsManager::ResourcePolicy':
        mergeInto(
          resourcePolicies,
          String(resolver.resolve(properties.SecretId)),
          asDocument(resolver.resolve(properties.ResourcePolicy)),
        );
        break;
      default:
    }
  }
  const { roles: _roles, functionArns, ...paths } = services;
  return {
    functions,
    resourcePolicies,
    tables,
    standIns: standInResources(cache, resolver),
    functionArns,
    services: paths,
  };
};

/** Each stack function's logical id, by its name in the stack (the one whose role it has). */
const functionsByLogicalId = (cache: IamCache): Map<string, string> => {
  const byLogicalId = new Map<string, string>();
  for (const [logicalId, resource] of Object.entries(cache.resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const role = referredResource(resource.Properties?.Role);
    const name = Object.entries(cache.functions).find(([, roleId]) => roleId === role)?.[0];
    if (name !== undefined) byLogicalId.set(logicalId, name);
  }
  return byLogicalId;
};

const servicePaths = (
  cache: IamCache,
  resolver: Resolver,
): ServicePaths & { roles: Record<string, string>; functionArns: Record<string, string> } => {
  const entries = Object.entries(cache.resources);
  const byLogicalId = functionsByLogicalId(cache);
  const functionArns = Object.fromEntries([...byLogicalId].map(([id, name]) => [name, resolver.arnOf(id)]));
  const roles: Record<string, string> = {};
  const stateMachines: ServicePaths['stateMachines'] = {};
  const rules: ServicePaths['rules'] = [];
  const schedules: ServicePaths['schedules'] = [];
  let api: ServicePaths['api'];
  for (const [logicalId, resource] of entries) {
    const properties = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::StepFunctions::StateMachine': {
        const type = properties.StateMachineType === 'EXPRESS' ? 'EXPRESS' : 'STANDARD';
        const role = type === 'EXPRESS' ? LOCAL_FAST_PATH_ROLE : LOCAL_LONG_WAITS_ROLE;
        const roleId = referredResource(properties.RoleArn);
        if (roleId !== undefined) roles[role] = roleId;
        const substitutions = (properties.DefinitionSubstitutions ?? {}) as Record<string, Json>;
        stateMachines[type] = {
          role,
          tasks: Object.fromEntries(
            Object.entries(substitutions)
              .filter(
                ([, value]) =>
                  cache.resources[referredResource(value) ?? '']?.Type === 'AWS::Lambda::Function',
              )
              .map(([name, value]) => [name, String(resolver.resolve(value))]),
          ),
        };
        break;
      }
      case 'AWS::Events::Rule':
        rules.push({
          ruleArn: resolver.arnOf(logicalId),
          targets: ((properties.Targets ?? []) as { Arn: Json; RoleArn?: Json }[]).map((target) => ({
            arn: String(resolver.resolve(target.Arn)),
            ...(target.RoleArn !== undefined && { role: String(resolver.resolve(target.RoleArn)) }),
          })),
        });
        break;
      case 'AWS::Scheduler::Schedule': {
        const target = (properties.Target ?? {}) as { Arn?: Json; RoleArn?: Json };
        const targetId = referredResource(target.Arn);
        const roleId = referredResource(target.RoleArn);
        const targetName = byLogicalId.get(targetId ?? '') ?? targetId ?? logicalId;
        if (roleId !== undefined) roles[scheduleRoleName(targetName)] = roleId;
        schedules.push({
          scheduleArn: `arn:aws:scheduler:${resolver.region}:${resolver.account}:schedule/default/${resolver.nameOf(logicalId)}`,
          targetArn: String(resolver.resolve(target.Arn)),
          ...(roleId !== undefined && { role: scheduleRoleName(targetName) }),
        });
        break;
      }
      case 'AWS::ApiGateway::Stage': {
        const restApi = String(resolver.resolve(properties.RestApiId));
        const authorizer = entries.find(([, r]) => r.Type === 'AWS::ApiGateway::Authorizer');
        const authorizerFunction = byLogicalId.get(
          referredResource(authorizer?.[1].Properties?.AuthorizerUri) ?? '',
        );
        api = {
          stageArn: `arn:aws:execute-api:${resolver.region}:${resolver.account}:${restApi}/${resolver.refOf(logicalId)}`,
          authorizerArn: `arn:aws:execute-api:${resolver.region}:${resolver.account}:${restApi}/authorizers/${authorizer === undefined ? '' : resolver.refOf(authorizer[0])}`,
          authorizerFunction: authorizerFunction ?? '',
        };
        break;
      }
      default:
    }
  }
  return { roles, functionArns, stateMachines, rules, schedules, ...(api !== undefined && { api }) };
};

/** The first resource a template value refers to (`Ref` or `Fn::GetAtt`), by logical id. */
const referredResource = (value: Json): string | undefined => {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = referredResource(item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const object = value as Record<string, Json>;
  if (typeof object.Ref === 'string' && !object.Ref.startsWith('AWS::')) return object.Ref;
  const getAtt = object['Fn::GetAtt'];
  if (getAtt !== undefined)
    return typeof getAtt === 'string' ? getAtt.split('.')[0] : (getAtt as string[])[0];
  return referredResource(Object.values(object));
};

const standInResources = (cache: IamCache, resolver: Resolver): Record<string, string> => {
  const standIns: Record<string, string> = {};
  const functionOfLambda = functionsByLogicalId(cache);
  for (const resource of Object.values(cache.resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const variables = (resource.Properties?.Environment as { Variables?: Record<string, Json> } | undefined)
      ?.Variables;
    for (const [variable, value] of Object.entries(variables ?? {})) {
      const referred = referredResource(value);
      if (referred !== undefined && standIns[variable] === undefined)
        standIns[variable] = resolver.arnOf(referred);
    }
  }
  // A state machine's DefinitionSubstitutions by their name: the fast path's LongWaitsStateMachineArn.
  for (const resource of Object.values(cache.resources)) {
    if (resource.Type !== 'AWS::StepFunctions::StateMachine') continue;
    const substitutions = (resource.Properties?.DefinitionSubstitutions ?? {}) as Record<string, Json>;
    for (const [name, value] of Object.entries(substitutions)) {
      const referred = referredResource(value);
      if (referred !== undefined && cache.resources[referred]?.Type === 'AWS::StepFunctions::StateMachine')
        standIns[name] = resolver.arnOf(referred);
    }
  }
  for (const resource of Object.values(cache.resources)) {
    if (resource.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    const name = functionOfLambda.get(referredResource(resource.Properties?.FunctionName) ?? '');
    const source = referredResource(resource.Properties?.EventSourceArn);
    if (name !== undefined && source !== undefined)
      standIns[`EVENT_SOURCE_QUEUE:${name}`] = resolver.arnOf(source);
  }
  return standIns;
};

/** Hashes of `files` (project-relative), for a cache entry. */
export const hashInputs = (files: readonly string[]): Record<string, string> =>
  Object.fromEntries(files.map((file) => [file, sha256(join(PROJECT_ROOT, file))]));

export { PROJECT_ROOT };
