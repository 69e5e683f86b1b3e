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
  iamStage,
  LOCAL_ACCOUNT,
  LOCAL_REGION,
  type PolicyDocument,
  policiesVersion,
  type StackPolicies,
  stackIam,
  stackPolicies,
} from './iam-policies.ts';
import { currentFunction } from './invocations.ts';
import { type ServiceCall, useServiceCallChecks } from './service-calls.ts';

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
  /**
   * What the local check could not read in the call (a key condition without its partition key,
   * an item without its key, a command it does not know): the call is denied, naming it, since a
   * context left empty could pass a `ForAllValues` condition AWS would have had values for.
   */
  unreadable?: string;
}

export interface IamDecision extends IamRequest {
  function: string;
  allowed: boolean;
  /** Why the call was denied without an allow being possible: what could not be read or evaluated. */
  reason?: string;
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

/**
 * The partition key value a Query names in its key condition: `<key> = :value` (the key by name
 * or by `#placeholder`), as DynamoDB's documentation writes it. Anything else (the operands the
 * other way round, no condition on the partition key, a value that is not a string) is unreadable.
 */
const queriedPartition = (input: Item, partitionKey: string): string | { unreadable: string } => {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const expression = input.KeyConditionExpression;
  if (typeof expression !== 'string')
    return { unreadable: 'a Query without a KeyConditionExpression names no partition' };
  for (const match of expression.matchAll(/(?:^|\(|\s)([#A-Za-z_][A-Za-z0-9_]*)\s*=\s*(:[A-Za-z0-9_]+)/g)) {
    const name = names[match[1] as string] ?? match[1];
    if (name !== partitionKey) continue;
    const value = keyValue(values[match[2] as string]);
    if (value !== undefined) return value;
    return { unreadable: `the key condition "${expression}" gives ${partitionKey} no string value` };
  }
  return {
    unreadable: `the key condition "${expression}" has no "${partitionKey} = :value" (the partition key, named first)`,
  };
};

const tableArn = (table: unknown): string =>
  `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${String(table)}`;

const partitionKeyOf = (indexName: unknown): string =>
  typeof indexName === 'string'
    ? (TABLE_DEFINITION.indexes.find((index) => index.indexName === indexName)?.partitionKey ??
      TABLE_DEFINITION.partitionKey)
    : TABLE_DEFINITION.partitionKey;

/** Every partition the items name, or what could not be read: an item without its partition key. */
const leadingKeys = (
  items: readonly (Item | undefined)[],
  what: string,
): string[] | { unreadable: string } => {
  if (items.length === 0) return { unreadable: `the ${what} names no item` };
  const keys = items.map((item) => keyValue(item?.[TABLE_DEFINITION.partitionKey]));
  if (keys.some((key) => key === undefined))
    return { unreadable: `the ${what} names an item without a string ${TABLE_DEFINITION.partitionKey}` };
  return [...new Set(keys as string[])];
};

/** The request context of an item operation: LeadingKeys, Attributes, ReturnValues, Select where set. */
const itemContext = (
  keys: string[] | { unreadable: string },
  input: Item,
  attributes: string[] = [],
): Pick<IamRequest, 'context' | 'unreadable'> => {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const context: Record<string, string | string[]> = {
    'dynamodb:LeadingKeys': Array.isArray(keys) ? keys : [],
  };
  const resolved = [...new Set(attributes.map((name) => names[name] ?? name))].filter(
    (name) => !name.startsWith(':'),
  );
  if (resolved.length > 0) context['dynamodb:Attributes'] = resolved;
  if (typeof input.ReturnValues === 'string') context['dynamodb:ReturnValues'] = input.ReturnValues;
  if (typeof input.Select === 'string') context['dynamodb:Select'] = input.Select;
  return Array.isArray(keys) ? { context } : { context, unreadable: keys.unreadable };
};

/** A table name the call gives, or what could not be read. */
const tableOf = (table: unknown): { resource: string; unreadable?: string } =>
  typeof table === 'string' && table !== ''
    ? { resource: tableArn(table) }
    : { resource: tableArn('*'), unreadable: 'the call names no table' };

/** The first of the parts' unreadable reasons, as the request's. */
const request = (
  action: string,
  resource: { resource: string; unreadable?: string },
  context: Pick<IamRequest, 'context' | 'unreadable'>,
): IamRequest => {
  const unreadable = resource.unreadable ?? context.unreadable;
  return {
    action,
    resource: resource.resource,
    context: context.context,
    ...(unreadable !== undefined && { unreadable }),
  };
};

/** What a DynamoDB call asks IAM, one request per action and resource (a transaction: one per item). */
export const dynamoDbRequests = (command: string, input: Item): IamRequest[] => {
  const operation = command.replace(/Command$/, '');
  const action = `dynamodb:${operation}`;
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem': {
      const key = input.Key as Item | undefined;
      return [
        request(
          action,
          tableOf(input.TableName),
          itemContext(leadingKeys([key], `${operation}'s Key`), input, [
            ...Object.keys(key ?? {}),
            ...attributeNamesOf(
              input.ProjectionExpression,
              input.UpdateExpression,
              input.ConditionExpression,
            ),
          ]),
        ),
      ];
    }
    case 'PutItem': {
      const item = input.Item as Item | undefined;
      return [
        request(
          action,
          tableOf(input.TableName),
          itemContext(leadingKeys([item], "PutItem's Item"), input, [
            ...Object.keys(item ?? {}),
            ...attributeNamesOf(input.ConditionExpression),
          ]),
        ),
      ];
    }
    case 'Query': {
      const index = input.IndexName;
      const partition = queriedPartition(input, partitionKeyOf(index));
      const table = tableOf(input.TableName);
      return [
        request(
          action,
          { ...table, resource: `${table.resource}${typeof index === 'string' ? `/index/${index}` : ''}` },
          itemContext(
            typeof partition === 'string' ? [partition] : partition,
            input,
            attributeNamesOf(input.ProjectionExpression),
          ),
        ),
      ];
    }
    case 'Scan': {
      // No key at all: as on AWS, a LeadingKeys condition has nothing to test (see evaluate).
      const table = tableOf(input.TableName);
      return [
        request(
          action,
          {
            ...table,
            resource: `${table.resource}${typeof input.IndexName === 'string' ? `/index/${input.IndexName}` : ''}`,
          },
          { context: {} },
        ),
      ];
    }
    case 'BatchGetItem':
      return Object.entries(
        (input.RequestItems ?? {}) as Record<string, { Keys?: Item[]; ProjectionExpression?: string }>,
      ).map(([table, batch]) =>
        request(
          action,
          tableOf(table),
          itemContext(
            leadingKeys(batch.Keys ?? [], "BatchGetItem's Keys"),
            batch as Item,
            attributeNamesOf(batch.ProjectionExpression),
          ),
        ),
      );
    case 'BatchWriteItem':
      return Object.entries(
        (input.RequestItems ?? {}) as Record<
          string,
          { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]
        >,
      ).map(([table, writes]) =>
        request(
          action,
          tableOf(table),
          itemContext(
            leadingKeys(
              writes.map((write) => write.PutRequest?.Item ?? write.DeleteRequest?.Key),
              "BatchWriteItem's requests",
            ),
            {},
          ),
        ),
      );
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
      const items = (input.TransactItems ?? []) as Record<string, Item>[];
      if (items.length === 0)
        return [
          request(action, tableOf(undefined), { context: {}, unreadable: `the ${operation} names no item` }),
        ];
      return items.flatMap((entry) =>
        Object.entries(entry).map(([kind, item]) => {
          const known = actionOf[kind];
          return request(
            `dynamodb:${known ?? kind}`,
            tableOf(item.TableName),
            known === undefined
              ? { context: {}, unreadable: `a transaction item of kind ${kind}` }
              : itemContext(
                  leadingKeys([(item.Key ?? item.Item) as Item | undefined], `transaction's ${kind}`),
                  item,
                ),
          );
        }),
      );
    }
    default:
      // PartiQL, table administration...: none of the handlers' calls; its keys are not read here.
      return [
        request(action, tableOf(input.TableName ?? '*'), {
          context: {},
          unreadable: `the command ${command || '(none)'}, whose keys the local check does not read`,
        }),
      ];
  }
};

/** A KMS encryption context key in a policy or a request (`kms:EncryptionContext:<key>`). */
const ENCRYPTION_CONTEXT_KEY = /"(kms:EncryptionContext:[^"]+")/gi;
const RENAMED_PREFIX = 'aws:RequestTag/';

type AllowStatement = { policyId?: string; statement?: { toJSON?: () => unknown } };

const statementIds = (
  identityPolicies: readonly { name: string; policy: PolicyDocument }[],
  statements: readonly AllowStatement[] = [],
): string[] =>
  statements.map(({ policyId, statement }) => {
    const policy = identityPolicies.find((p) => p.name === policyId)?.policy;
    const index = policy?.Statement.findIndex((s) => JSON.stringify(s) === JSON.stringify(statement)) ?? -1;
    return `${policyId ?? 'resource-policy'}#${index}`;
  });

/**
 * A `ForAllValues` condition is true of an empty set: a statement allowing on one tells nothing
 * when the request has no value for its key. AWS gives a key for every item operation; a local
 * request without one is a call whose keys were not read, and an allow on it is not trusted.
 */
const emptyForAllValues = (
  statements: readonly AllowStatement[],
  context: Record<string, string | string[]>,
): string | undefined => {
  const given = new Map(Object.entries(context).map(([key, value]) => [key.toLowerCase(), value]));
  for (const { statement } of statements) {
    const condition = ((statement?.toJSON?.() ?? statement) as { Condition?: Record<string, object> })
      ?.Condition;
    for (const [operator, keys] of Object.entries(condition ?? {})) {
      if (!/^forallvalues:/i.test(operator)) continue;
      for (const key of Object.keys(keys)) {
        const value = given.get(key.toLowerCase());
        if (value === undefined || (Array.isArray(value) && value.length === 0))
          return `${operator} on ${key}, which the request gives no value`;
      }
    }
  }
  return undefined;
};

/** Who makes a call, as IAM sees it: a role (a function's, a service's) or an AWS service itself. */
export interface IamPrincipal {
  /** As decisions name it: the function (`Authorizer`), a service role (`LifecycleFastPath`), or the service. */
  name: string;
  /** The request's principal: the role's session, or the service principal (`apigateway.amazonaws.com`). */
  arn: string;
  /** The role's ARN (aws:PrincipalArn); none for a service principal. */
  roleArn?: string;
  identityPolicies: FunctionPolicies['identityPolicies'];
}

const SERVICE_PRINCIPAL = /^[a-z0-9.-]+\.amazonaws\.com$/;

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
    private readonly recordedWith: { stage?: string; policies: string; without?: string } = { policies: '' },
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
    // Never remembered: its context may look like a readable request's.
    if (request.unreadable !== undefined) return this.evaluate(functionName, request);
    const key = this.decisionKey(functionName, request);
    const known = this.remembered.get(key);
    if (known !== undefined) return { ...known, ...request };
    const decision = await this.evaluate(functionName, request);
    if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
    this.remembered.set(key, decision);
    return decision;
  }

  /** `name` as a principal: a function or service role of the stack, or a service principal. */
  principal(name: string): IamPrincipal {
    if (SERVICE_PRINCIPAL.test(name)) return { name, arn: name, identityPolicies: [] };
    const fn = this.policies.functions[name];
    if (fn === undefined)
      throw new Error(`IAM: no function or role ${name} in the stack (lib/credit-transfer-stack.ts)`);
    return {
      name,
      arn: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${fn.roleName}/${name}`,
      roleArn: fn.roleArn,
      identityPolicies: fn.identityPolicies,
    };
  }

  /** IAM's answer made afresh by the library, whatever is remembered. */
  async evaluate(functionName: string, request: IamRequest): Promise<IamDecision> {
    const principal = this.principal(functionName);
    const denied = (reason: string): IamDecision => {
      const decision: IamDecision = {
        function: functionName,
        ...request,
        allowed: false,
        allowedBy: [],
        reason,
      };
      this.record(decision);
      return decision;
    };
    // What could not be read is never allowed: the call fails as a denial that names it.
    if (request.unreadable !== undefined)
      return denied(`the local check could not read ${request.unreadable}`);
    const identityPolicies = principal.identityPolicies.map(({ name, policy }) => ({
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
          principal: principal.arn,
          action: request.action,
          resource: { resource: request.resource, accountId: LOCAL_ACCOUNT },
          contextVariables: {
            ...(principal.roleArn !== undefined && {
              'aws:PrincipalArn': principal.roleArn,
              'aws:PrincipalAccount': LOCAL_ACCOUNT,
              'lambda:SourceFunctionArn': `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
            }),
            'aws:RequestedRegion': LOCAL_REGION,
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
    // An action, a resource or a condition the library cannot evaluate: a denial naming it.
    if (result.resultType === 'error')
      return denied(`the local check could not evaluate the request: ${JSON.stringify(result.errors)}`);
    const analysis = result.resultType === 'single' ? result.result.analysis : result.results[0]?.analysis;
    const allowing = [
      ...((analysis?.identityAnalysis?.allowStatements ?? []) as AllowStatement[]),
      ...((analysis?.resourceAnalysis?.allowStatements ?? []) as AllowStatement[]),
    ];
    if (result.overallResult === 'Allowed') {
      const empty = emptyForAllValues(allowing, request.context);
      if (empty !== undefined) return denied(`the local check could not evaluate ${empty}`);
    }
    const allowed = result.overallResult === 'Allowed';
    const allowedBy = statementIds(
      identityPolicies,
      analysis?.identityAnalysis?.allowStatements as AllowStatement[],
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
    return {
      action: call.action,
      resource: resource ?? name,
      // Every call of an SDK client goes over TLS (the queue policies deny any other).
      context: { 'aws:SecureTransport': 'true', ...call.context },
      ...(resource === undefined && {
        unreadable: `the resource ${name}, which no resource of the stack is (lib/credit-transfer-stack.ts)`,
      }),
    };
  }

  /**
   * Who makes a service's call and what it asks IAM: the service's role where the template gives
   * it one, else the service principal, whose only allow is the resource policy of what it calls.
   * Several ways in (two rules sending to one queue): any one allowed is enough. None in the
   * template: one unreadable request, denied, naming what is missing.
   */
  serviceRequests(call: ServiceCall): { principal: string; request: IamRequest }[] {
    const { services, functionArns, standIns } = this.policies;
    const missing = (principal: string, action: string, resource: string, what: string) => [
      { principal, request: { action, resource, context: {}, unreadable: what } },
    ];
    const invoke = 'lambda:InvokeFunction';
    switch (call.kind) {
      case 'task': {
        const machine = services.stateMachines[call.machine];
        const target = machine?.tasks[call.substitution];
        if (machine === undefined || target === undefined)
          return missing(
            machine?.role ?? 'states.amazonaws.com',
            invoke,
            call.substitution,
            `the ${call.machine} state machine's ${call.substitution}, which the template does not substitute`,
          );
        return [{ principal: machine.role, request: { action: invoke, resource: target, context: {} } }];
      }
      case 'authorizer':
      case 'route': {
        const api = services.api;
        const functionName = call.kind === 'authorizer' ? api?.authorizerFunction : call.functionName;
        const target = functionArns[functionName ?? ''];
        if (api === undefined || target === undefined)
          return missing(
            'apigateway.amazonaws.com',
            invoke,
            functionName ?? '',
            `the function ${functionName} of the API, which the template does not have`,
          );
        const sourceArn =
          call.kind === 'authorizer' ? api.authorizerArn : `${api.stageArn}/${call.method}${call.path}`;
        return [
          {
            principal: 'apigateway.amazonaws.com',
            request: {
              action: invoke,
              resource: target,
              context: { 'aws:SourceArn': sourceArn, 'aws:SourceAccount': LOCAL_ACCOUNT },
            },
          },
        ];
      }
      case 'bus-to-queue': {
        const queue = standIns[`EVENT_SOURCE_QUEUE:${call.functionName}`];
        const ways = services.rules.flatMap((rule) =>
          rule.targets
            .filter((target) => target.arn === queue)
            .map((target) => ({
              principal: this.roleNamed(target.role) ?? 'events.amazonaws.com',
              request: {
                action: 'sqs:SendMessage',
                resource: target.arn,
                context: {
                  'aws:SourceArn': rule.ruleArn,
                  'aws:SourceAccount': LOCAL_ACCOUNT,
                  'aws:SecureTransport': 'true',
                },
              },
            })),
        );
        return ways.length > 0
          ? ways
          : missing(
              'events.amazonaws.com',
              'sqs:SendMessage',
              queue ?? call.functionName,
              `a rule sending to the queue ${call.functionName} reads, which the template does not have`,
            );
      }
      case 'scheduled': {
        const target = functionArns[call.functionName];
        const ways = [
          ...services.schedules
            .filter((schedule) => schedule.targetArn === target && schedule.role !== undefined)
            .map((schedule) => ({
              principal: schedule.role as string,
              request: { action: invoke, resource: schedule.targetArn, context: {} },
            })),
          ...services.rules.flatMap((rule) =>
            rule.targets
              .filter((t) => t.arn === target)
              .map((t) => ({
                principal: this.roleNamed(t.role) ?? 'events.amazonaws.com',
                request: {
                  action: invoke,
                  resource: t.arn,
                  context: { 'aws:SourceArn': rule.ruleArn, 'aws:SourceAccount': LOCAL_ACCOUNT },
                },
              })),
          ),
        ];
        return ways.length > 0
          ? ways
          : missing(
              'scheduler.amazonaws.com',
              invoke,
              target ?? call.functionName,
              `a schedule invoking ${call.functionName}, which the template does not have`,
            );
      }
    }
  }

  /** The stack's name of the role with this ARN (a rule target's), if it is one of the stack's. */
  private roleNamed(roleArn: string | undefined): string | undefined {
    if (roleArn === undefined) return undefined;
    return Object.entries(this.policies.functions).find(([, fn]) => fn.roleArn === roleArn)?.[0];
  }

  /** Throws the AccessDeniedException AWS gives the service unless one of its ways in is allowed. */
  async checkServiceCall(call: ServiceCall): Promise<void> {
    let refused: Error | undefined;
    for (const { principal, request } of this.serviceRequests(call)) {
      const decision = await this.decide(principal, request);
      if (decision.allowed) return;
      refused ??= accessDenied(this.principal(principal).arn, request, decision.reason);
    }
    throw refused;
  }

  /** Throws AccessDeniedException, as AWS answers, unless every request is allowed. */
  async check(functionName: string, requests: readonly IamRequest[]): Promise<void> {
    for (const request of requests) {
      const decision = await this.decide(functionName, request);
      if (!decision.allowed) throw accessDenied(this.principal(functionName).arn, request, decision.reason);
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

/**
 * The error AWS answers a call no policy allows, as the SDK raises it; `reason` when the local
 * check denied it for what it could not read or evaluate.
 */
export const accessDenied = (principalArn: string, request: IamRequest, reason?: string): Error => {
  const service = request.action.split(':')[0] as keyof typeof EXCEPTION_OF_SERVICE;
  const Exception = EXCEPTION_OF_SERVICE[service] ?? DynamoDBServiceException;
  return new Exception({
    name: 'AccessDeniedException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400, requestId: 'local-iam' },
    message: `User: ${principalArn} is not authorized to perform: ${request.action} on resource: ${request.resource} because ${reason ?? `no policy allows the ${request.action} action`}`,
  });
};

let enforcer: IamEnforcer | undefined;

/** The running process's enforcer, once useIamEnforcement has run (for tests and the bench). */
export const iamEnforcer = (): IamEnforcer | undefined => enforcer;

/**
 * LOCAL_IAM_WITHOUT=Function=action[@KEY_PREFIX],...: that function (or service role:
 * `LifecycleFastPath`...) without that action (only in the statements whose dynamodb:LeadingKeys
 * name KEY_PREFIX, when given; without a prefix, in the resource policies that name its role
 * too). `<service>.amazonaws.com=action[@Function]`: the service without that action in the
 * resource policies that allow it (only that function's, when given). For tests: they show what
 * a route answers when a grant is missing.
 */
const withoutGrants = (policies: StackPolicies, setting: string | undefined): StackPolicies => {
  for (const entry of (setting ?? '').split(',').filter(Boolean)) {
    const [functionName = '', grant = ''] = entry.split('=');
    const [action, prefix] = grant.split('@');
    if (SERVICE_PRINCIPAL.test(functionName)) {
      const only = prefix === undefined ? undefined : policies.functionArns[prefix];
      if (prefix !== undefined && only === undefined)
        throw new Error(`LOCAL_IAM_WITHOUT: no function ${prefix}`);
      for (const [arn, policy] of Object.entries(policies.resourcePolicies)) {
        if (only !== undefined && arn !== only) continue;
        policy.Statement = policy.Statement.flatMap((statement) => {
          if (
            statement.Effect !== 'Allow' ||
            !JSON.stringify(statement.Principal ?? {}).includes(`"${functionName}"`)
          )
            return [statement];
          const actions = [statement.Action].flat().filter((a) => a !== action);
          return actions.length === 0 ? [] : [{ ...statement, Action: actions }];
        });
      }
      continue;
    }
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
    stage: iamStage(),
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
  useServiceCallChecks((call) => made.checkServiceCall(call));
  return made;
};
