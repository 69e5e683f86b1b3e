import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { EventBridgeServiceException } from '@aws-sdk/client-eventbridge';
import { KMSServiceException } from '@aws-sdk/client-kms';
import { LambdaServiceException } from '@aws-sdk/client-lambda';
import { SFNServiceException } from '@aws-sdk/client-sfn';
import { SQSServiceException } from '@aws-sdk/client-sqs';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { addToEveryClient, type SdkMiddleware } from '#adapters/aws/aws-clients';
import { type StandInCall, useStandInChecks } from '#adapters/aws/stand-ins';
import { TABLE_DEFINITION } from '#adapters/table/table-definition';
import { decisionKeys } from './iam-decision-key.ts';
import {
  decisionsDir,
  type FunctionPolicies,
  LOCAL_ACCOUNT,
  LOCAL_REGION,
  type PolicyDocument,
  policiesVersion,
  type StackPolicies,
  stackIam,
  stackPolicies,
} from './iam-policies.ts';
import { currentFunction } from './invocations.ts';

/**
 * The local runtime's IAM: every AWS SDK call a function makes is checked, before it is sent,
 * against that function's role policies and the resource policy of what it calls, as the
 * synthesized stack gives them (scripts/local/iam-policies.ts), by @cloud-copilot/iam-simulate
 * (AGPL-3.0: a devDependency, loaded only here, never bundled into a Lambda function; see
 * docs/decisions.md). A denied call fails as AWS fails it: AccessDeniedException, through the
 * SDK's middleware stack. LOCAL_IAM=off turns the check off (benchmarks only).
 */

/** One request as IAM sees it. */
export interface IamRequest {
  action: string;
  resource: string;
  context: Record<string, string | string[]>;
}

export interface IamDecision extends IamRequest {
  function: string;
  allowed: boolean;
  /** The statements that allowed it, as `<policy name>#<statement index>`. */
  allowedBy: string[];
}

type Item = Record<string, unknown>;

/** A key attribute's value, marshalled ({ S: ... }) or not. */
const keyValue = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && 'S' in value) return String((value as { S: unknown }).S);
  return undefined;
};

const attributeNamesOf = (...expressions: (unknown | undefined)[]): string[] => {
  const names = new Set<string>();
  for (const expression of expressions) {
    if (typeof expression !== 'string') continue;
    for (const match of expression.matchAll(/#[A-Za-z0-9_]+|\b[A-Za-z_][A-Za-z0-9_]*\b/g))
      names.add(match[0]);
  }
  return [...names];
};

/** The partition key value a Query names in its key condition (`#pk = :v` or `pk = :v`). */
const queriedPartition = (input: Item, partitionKey: string): string | undefined => {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const match of String(input.KeyConditionExpression ?? '').matchAll(
    /([#A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/g,
  )) {
    const name = names[match[1] as string] ?? match[1];
    if (name === partitionKey) return keyValue(values[match[2] as string]);
  }
  return undefined;
};

const tableArn = (table: string): string =>
  `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${table}`;

const partitionKeyOf = (indexName: unknown): string =>
  typeof indexName === 'string'
    ? (TABLE_DEFINITION.indexes.find((index) => index.indexName === indexName)?.partitionKey ??
      TABLE_DEFINITION.partitionKey)
    : TABLE_DEFINITION.partitionKey;

const leadingKeys = (items: readonly (Item | undefined)[]): string[] => [
  ...new Set(
    items.map((item) => keyValue(item?.[TABLE_DEFINITION.partitionKey])).filter((v) => v !== undefined),
  ),
];

/** The request context of an item operation: LeadingKeys, Attributes, ReturnValues, Select where set. */
const itemContext = (
  keys: string[],
  input: Item,
  attributes: string[] = [],
): Record<string, string | string[]> => {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const context: Record<string, string | string[]> = { 'dynamodb:LeadingKeys': keys };
  const resolved = [...new Set(attributes.map((name) => names[name] ?? name))].filter(
    (name) => !name.startsWith(':'),
  );
  if (resolved.length > 0) context['dynamodb:Attributes'] = resolved;
  if (typeof input.ReturnValues === 'string') context['dynamodb:ReturnValues'] = input.ReturnValues;
  if (typeof input.Select === 'string') context['dynamodb:Select'] = input.Select;
  return context;
};

/** What a DynamoDB call asks IAM, one request per action and resource (a transaction: one per item). */
export const dynamoDbRequests = (command: string, input: Item): IamRequest[] => {
  const operation = command.replace(/Command$/, '');
  const action = `dynamodb:${operation}`;
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem': {
      const key = input.Key as Item;
      return [
        {
          action,
          resource: tableArn(String(input.TableName)),
          context: itemContext(leadingKeys([key]), input, [
            ...Object.keys(key ?? {}),
            ...attributeNamesOf(
              input.ProjectionExpression,
              input.UpdateExpression,
              input.ConditionExpression,
            ),
          ]),
        },
      ];
    }
    case 'PutItem': {
      const item = input.Item as Item;
      return [
        {
          action,
          resource: tableArn(String(input.TableName)),
          context: itemContext(leadingKeys([item]), input, [
            ...Object.keys(item ?? {}),
            ...attributeNamesOf(input.ConditionExpression),
          ]),
        },
      ];
    }
    case 'Query': {
      const index = input.IndexName;
      const partition = queriedPartition(input, partitionKeyOf(index));
      return [
        {
          action,
          resource: `${tableArn(String(input.TableName))}${typeof index === 'string' ? `/index/${index}` : ''}`,
          context: itemContext(
            partition === undefined ? [] : [partition],
            input,
            attributeNamesOf(input.ProjectionExpression),
          ),
        },
      ];
    }
    case 'Scan':
      return [
        {
          action,
          resource: `${tableArn(String(input.TableName))}${typeof input.IndexName === 'string' ? `/index/${input.IndexName}` : ''}`,
          context: {},
        },
      ];
    case 'BatchGetItem':
      return Object.entries(
        (input.RequestItems ?? {}) as Record<string, { Keys: Item[]; ProjectionExpression?: string }>,
      ).map(([table, request]) => ({
        action,
        resource: tableArn(table),
        context: itemContext(
          leadingKeys(request.Keys),
          request as Item,
          attributeNamesOf(request.ProjectionExpression),
        ),
      }));
    case 'BatchWriteItem':
      return Object.entries(
        (input.RequestItems ?? {}) as Record<
          string,
          { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]
        >,
      ).map(([table, requests]) => ({
        action,
        resource: tableArn(table),
        context: itemContext(
          leadingKeys(requests.map((request) => request.PutRequest?.Item ?? request.DeleteRequest?.Key)),
          {},
        ),
      }));
    case 'TransactWriteItems':
    case 'TransactGetItems': {
      // IAM authorizes each item of a transaction as its own action on its table.
      const actionOf: Record<string, string> = {
        Put: 'PutItem',
        Update: 'UpdateItem',
        Delete: 'DeleteItem',
        ConditionCheck: 'ConditionCheckItem',
        Get: 'GetItem',
      };
      return ((input.TransactItems ?? []) as Record<string, Item>[]).flatMap((entry) =>
        Object.entries(entry).map(([kind, request]) => ({
          action: `dynamodb:${actionOf[kind] ?? kind}`,
          resource: tableArn(String(request.TableName)),
          context: itemContext(leadingKeys([(request.Key ?? request.Item) as Item]), request),
        })),
      );
    }
    default:
      return [{ action, resource: tableArn(String(input.TableName ?? '*')), context: {} }];
  }
};

/** A KMS encryption context key in a policy or a request (`kms:EncryptionContext:<key>`). */
const ENCRYPTION_CONTEXT_KEY = /"(kms:EncryptionContext:[^"]+")/gi;
const RENAMED_PREFIX = 'aws:RequestTag/';

const statementIds = (
  fn: FunctionPolicies,
  statements: readonly { policyId?: string; statement?: unknown }[] = [],
): string[] =>
  statements.map(({ policyId, statement }) => {
    const policy = fn.identityPolicies.find((p) => p.name === policyId)?.policy;
    const index = policy?.Statement.findIndex((s) => JSON.stringify(s) === JSON.stringify(statement)) ?? -1;
    return `${policyId ?? 'resource-policy'}#${index}`;
  });

/** Decisions kept for requests no policy can tell apart (scripts/local/iam-decision-key.ts). */
const MAX_REMEMBERED = 10_000;

export class IamEnforcer {
  private readonly recorded = new Set<string>();
  private readonly remembered = new Map<string, IamDecision>();
  private readonly renamedDocuments = new WeakMap<PolicyDocument, PolicyDocument>();
  private readonly decisionKey: ReturnType<typeof decisionKeys>;

  constructor(
    readonly policies: StackPolicies,
    private readonly decisionsFile: string | undefined,
    /** Written with each decision: the policies' version, and any grants taken away (LOCAL_IAM_WITHOUT). */
    private readonly recordedWith: { policies: string; without?: string } = { policies: '' },
  ) {
    this.decisionKey = decisionKeys(policies);
  }

  /**
   * The library drops every key of the form kms:EncryptionContext:<key> from a request (it
   * matches such keys only up to a '/'), and the key policies rest on them: for the simulation
   * they are renamed, in the request and in every policy alike, to aws:RequestTag/<the key>,
   * which it keeps, and which no policy of the stack uses. Each policy once: the policies do not
   * change while the process runs.
   */
  private renamed(document: PolicyDocument): PolicyDocument {
    let renamed = this.renamedDocuments.get(document);
    if (renamed === undefined) {
      renamed = JSON.parse(
        JSON.stringify(document).replace(ENCRYPTION_CONTEXT_KEY, `"${RENAMED_PREFIX}$1`),
      ) as PolicyDocument;
      this.renamedDocuments.set(document, renamed);
    }
    return renamed;
  }

  private resourcePolicyFor(resource: string) {
    const direct = this.policies.resourcePolicies[resource];
    if (direct) return direct;
    // An index is covered by its table's resource policy.
    const table = /^(arn:aws:dynamodb:[^:]*:[^:]*:table\/[^/]+)\/index\//.exec(resource)?.[1];
    return table ? this.policies.resourcePolicies[table] : undefined;
  }

  /** How many decisions are remembered (for tests: a decision found in memory adds none). */
  rememberedCount(): number {
    return this.remembered.size;
  }

  /** IAM's answer for `functionName`'s request. */
  async decide(functionName: string, request: IamRequest): Promise<IamDecision> {
    const key = this.decisionKey(functionName, request);
    const known = this.remembered.get(key);
    if (known !== undefined) return { ...known, ...request };
    const decision = await this.evaluate(functionName, request);
    if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
    this.remembered.set(key, decision);
    return decision;
  }

  /** IAM's answer made afresh by the library, whatever is remembered. */
  async evaluate(functionName: string, request: IamRequest): Promise<IamDecision> {
    const fn = this.policies.functions[functionName];
    if (fn === undefined)
      throw new Error(`IAM: no function ${functionName} in the stack (lib/credit-transfer-stack.ts)`);
    const identityPolicies = fn.identityPolicies.map(({ name, policy }) => ({
      name,
      policy: this.renamed(policy),
    }));
    const found = this.resourcePolicyFor(request.resource);
    const resourcePolicy = found === undefined ? undefined : this.renamed(found);
    const context = Object.fromEntries(
      Object.entries(request.context).map(([key, value]) => [
        /^kms:EncryptionContext:/i.test(key) ? `${RENAMED_PREFIX}${key}` : key,
        value,
      ]),
    );
    const result = await runSimulation(
      {
        request: {
          principal: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${fn.roleName}/${functionName}`,
          action: request.action,
          resource: { resource: request.resource, accountId: LOCAL_ACCOUNT },
          contextVariables: {
            'aws:PrincipalArn': fn.roleArn,
            'aws:PrincipalAccount': LOCAL_ACCOUNT,
            'aws:RequestedRegion': LOCAL_REGION,
            'lambda:SourceFunctionArn': `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
            ...context,
          },
        },
        identityPolicies,
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy !== undefined && { resourcePolicy }),
      },
      { simulationMode: 'Strict' },
    );
    if (result.resultType === 'error')
      throw new Error(
        `IAM: the policies of ${functionName} could not be evaluated: ${JSON.stringify(result.errors)}`,
      );
    const analysis = result.resultType === 'single' ? result.result.analysis : result.results[0]?.analysis;
    const allowed = result.overallResult === 'Allowed';
    const allowedBy = statementIds(
      { ...fn, identityPolicies },
      analysis?.identityAnalysis?.allowStatements as { policyId?: string; statement?: unknown }[],
    );
    const decision: IamDecision = { function: functionName, ...request, allowed, allowedBy };
    this.record(decision);
    return decision;
  }

  /** Each distinct (function, action, resource, outcome, statements) once per process. */
  private record(decision: IamDecision): void {
    if (this.decisionsFile === undefined) return;
    const { context: _context, ...summary } = decision;
    const line = JSON.stringify({ ...summary, ...this.recordedWith });
    if (this.recorded.has(line)) return;
    this.recorded.add(line);
    appendFileSync(this.decisionsFile, `${line}\n`);
  }

  /** The request a stand-in's call makes of IAM: its resource as the stack's, in the local account. */
  standInRequest(functionName: string, call: StandInCall): IamRequest {
    const name = call.resource === 'EVENT_SOURCE_QUEUE' ? `${call.resource}:${functionName}` : call.resource;
    const resource = this.policies.standIns[name];
    if (resource === undefined)
      throw new Error(`IAM: no resource of the stack is ${name} (lib/credit-transfer-stack.ts)`);
    return {
      action: call.action,
      resource,
      // Every call of an SDK client goes over TLS (the queue policies deny any other).
      context: { 'aws:SecureTransport': 'true', ...call.context },
    };
  }

  /** Throws AccessDeniedException, as AWS answers, unless every request is allowed. */
  async check(functionName: string, requests: readonly IamRequest[]): Promise<void> {
    for (const request of requests) {
      const decision = await this.decide(functionName, request);
      if (!decision.allowed)
        throw accessDenied(this.policies.functions[functionName] as FunctionPolicies, functionName, request);
    }
  }
}

/** Each service's SDK raises its own exception class; the local check raises the one of the call's service. */
const EXCEPTION_OF_SERVICE = {
  dynamodb: DynamoDBServiceException,
  kms: KMSServiceException,
  events: EventBridgeServiceException,
  states: SFNServiceException,
  sqs: SQSServiceException,
  lambda: LambdaServiceException,
} as const;

/** The error AWS answers a call no policy allows, as the SDK raises it. */
export const accessDenied = (fn: FunctionPolicies, functionName: string, request: IamRequest): Error => {
  const service = request.action.split(':')[0] as keyof typeof EXCEPTION_OF_SERVICE;
  const Exception = EXCEPTION_OF_SERVICE[service] ?? DynamoDBServiceException;
  return new Exception({
    name: 'AccessDeniedException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400, requestId: 'local-iam' },
    message: `User: arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${fn.roleName}/${functionName} is not authorized to perform: ${request.action} on resource: ${request.resource} because no policy allows the ${request.action} action`,
  });
};

let enforcer: IamEnforcer | undefined;

/** The running process's enforcer, once useIamEnforcement has run (for tests and the bench). */
export const iamEnforcer = (): IamEnforcer | undefined => enforcer;

/**
 * LOCAL_IAM_WITHOUT=Function=action[@KEY_PREFIX],...: that function without that action (only in
 * the statements whose dynamodb:LeadingKeys name KEY_PREFIX, when given; without a prefix, in the
 * resource policies that name its role too). For tests: they show
 * what a route answers when a grant is missing.
 */
const withoutGrants = (policies: StackPolicies, setting: string | undefined): StackPolicies => {
  for (const entry of (setting ?? '').split(',').filter(Boolean)) {
    const [functionName = '', grant = ''] = entry.split('=');
    const [action, prefix] = grant.split('@');
    const fn = policies.functions[functionName];
    if (fn === undefined) throw new Error(`LOCAL_IAM_WITHOUT: no function ${functionName}`);
    for (const { policy } of fn.identityPolicies) {
      policy.Statement = policy.Statement.flatMap((statement) => {
        const keys = JSON.stringify(statement.Condition ?? {});
        if (prefix !== undefined && !keys.includes(`"${prefix}*"`)) return [statement];
        const actions = [statement.Action].flat().filter((a) => a !== action);
        return actions.length === 0 ? [] : [{ ...statement, Action: actions }];
      });
    }
    // A key policy may grant the role by name, which KMS honours alone: it goes as well.
    if (prefix !== undefined) continue;
    for (const policy of Object.values(policies.resourcePolicies)) {
      policy.Statement = policy.Statement.flatMap((statement) => {
        if (statement.Effect !== 'Allow' || !JSON.stringify(statement.Principal ?? {}).includes(fn.roleArn))
          return [statement];
        const actions = [statement.Action].flat().filter((a) => a !== action);
        return actions.length === 0 ? [] : [{ ...statement, Action: actions }];
      });
    }
  }
  return policies;
};

/**
 * Before any AWS client is made: every SDK call made inside a function's invocation (see
 * invocations.ts) is checked first. Calls outside any function (the runtime making its table,
 * seeding its client, the local bus's offset) are the operator's, as on AWS, and go unchecked.
 */
export const useIamEnforcement = (tableName: string): IamEnforcer | undefined => {
  if (process.env.LOCAL_IAM === 'off') return undefined;
  const directory = decisionsDir();
  mkdirSync(directory, { recursive: true });
  const decisionsFile = join(
    directory,
    `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}.jsonl`,
  );
  const iam = stackIam();
  const without = process.env.LOCAL_IAM_WITHOUT || undefined;
  const policies = withoutGrants(stackPolicies(iam, { tableName }), without);
  const made = new IamEnforcer(policies, decisionsFile, {
    policies: policiesVersion(iam),
    ...(without !== undefined && { without }),
  });
  enforcer = made;
  const middleware: SdkMiddleware = (next, context) => async (args) => {
    const functionName = currentFunction();
    if (functionName !== undefined) {
      if (context.clientName !== 'DynamoDBClient')
        throw new Error(`IAM: ${context.clientName} calls are not checked locally yet`);
      await made.check(functionName, dynamoDbRequests(context.commandName ?? '', args.input));
    }
    return next(args);
  };
  addToEveryClient('localIamCheck', middleware);
  // The stand-ins for KMS, EventBridge, Step Functions and SQS are checked alike.
  useStandInChecks({
    check: async (call) => {
      const functionName = currentFunction();
      if (functionName !== undefined)
        await made.check(functionName, [made.standInRequest(functionName, call)]);
    },
    scope: () => currentFunction() ?? '',
  });
  return made;
};
