import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { RECOVERY_INDEX } from '#adapters/table/table-definition';
import {
  BATCH_LIFECYCLES_ENTRY,
  LIFECYCLE_ASL_FILE,
  LONG_WAITS_ASL_FILE,
  LONG_WAITS_SUBSTITUTION,
  RECONCILER_ENTRY,
  WORKFLOW_FUNCTIONS,
} from '#workflow/task-functions';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { SYNTH_TIMEOUT_MS, synthesized } from './synth.ts';
import {
  allowedActions,
  getAttTargets,
  type Resource,
  refOf,
  resourcesOf,
  type Statement,
  statementsOfFunction,
} from './template-queries.ts';

/** Statements of a role (inline and attached policies), by the role's logical id. */
const statementsOfRole = (template: Template, roleId: string): Statement[] => {
  const role = resourcesOf(template, 'AWS::IAM::Role').get(roleId);
  const inline = (
    (role?.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]
  ).flatMap((policy) => policy.PolicyDocument.Statement);
  const attached = [...resourcesOf(template, 'AWS::IAM::Policy').values()]
    .filter((policy) => ((policy.Properties.Roles ?? []) as unknown[]).some((r) => refOf(r) === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  return [...inline, ...attached];
};

/** The statements that allow `action`, with the logical ids their resources point at. */
const grantsOf = (statements: readonly Statement[], action: string): string[][] =>
  statements
    .filter((statement) => statement.Effect === 'Allow')
    .filter((statement) =>
      (Array.isArray(statement.Action) ? statement.Action : [statement.Action]).includes(action),
    )
    .map((statement) => {
      const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      return resources.map((resource) => JSON.stringify(resource));
    });

describe('credit transfer lifecycle stack', () => {
  let template: Template;
  let functions: Map<string, Resource>;

  const functionByEntry = (entry: string): string => {
    const found = [...functions.entries()].filter(([, fn]) =>
      String(fn.Properties.Description ?? '').startsWith('Lifecycle:'),
    );
    const target = Object.values(WORKFLOW_FUNCTIONS).find((fn) => fn.entry === entry)?.description;
    const match = found.find(([, fn]) =>
      target === undefined
        ? String(fn.Properties.Description).includes('drives on')
        : fn.Properties.Description === target,
    );
    if (!match) throw new Error(`No function for ${entry}`);
    return match[0];
  };
  const routeFunction = (path: string, method: string): string => {
    const fn = [...functions.entries()].find(([, candidate]) =>
      String(candidate.Properties.Description ?? '').startsWith(`${method} ${path}:`),
    );
    if (!fn) throw new Error(`No function for ${method} ${path}`);
    return fn[0];
  };
  /** The fast path (EXPRESS, what every start starts) or the machine of long waits (STANDARD). */
  const stateMachine = (type: 'EXPRESS' | 'STANDARD' = 'EXPRESS'): [string, Resource] => {
    const entry = [...resourcesOf(template, 'AWS::StepFunctions::StateMachine').entries()].find(
      ([, machine]) => machine.Properties.StateMachineType === type,
    );
    if (!entry) throw new Error(`No ${type} state machine`);
    return entry;
  };
  const aslOf = (type: 'EXPRESS' | 'STANDARD'): string =>
    readFileSync(join(PROJECT_ROOT, type === 'EXPRESS' ? LIFECYCLE_ASL_FILE : LONG_WAITS_ASL_FILE), 'utf8');
  /** The task functions a machine's ASL file names. */
  const functionsOf = (type: 'EXPRESS' | 'STANDARD') =>
    Object.values(WORKFLOW_FUNCTIONS).filter((fn) => aslOf(type).includes(`\${${fn.substitution}}`));
  const tableId = (): string => {
    const [id] = resourcesOf(template, 'AWS::DynamoDB::Table').keys();
    if (!id) throw new Error('No table');
    return id;
  };

  beforeAll(async () => {
    // The default stage (dev, sandbox rail); the connector rail's grants: stages.test.ts.
    [{ template }] = await synthesized({});
    functions = resourcesOf(template, 'AWS::Lambda::Function');
  }, SYNTH_TIMEOUT_MS);

  it('deploys each ASL file itself: the fast path as an Express state machine, long waits as a Standard one, both traced, logging every event without data', () => {
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 2);
    for (const type of ['EXPRESS', 'STANDARD'] as const) {
      const [, machine] = stateMachine(type);
      expect(JSON.parse(String(machine.Properties.DefinitionString)), type).toEqual(JSON.parse(aslOf(type)));
      expect(machine.Properties, type).toMatchObject({
        StateMachineType: type,
        TracingConfiguration: { Enabled: true },
        LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
      });
    }
    // Express runs at most 5 minutes: the fast path's own bound says so.
    expect(JSON.parse(aslOf('EXPRESS')).TimeoutSeconds).toBeLessThanOrEqual(300);
  });

  it('fills every Task resource with the ARN of its own function, and the hand-over with the Standard machine', () => {
    const [waitsId] = stateMachine('STANDARD');
    for (const type of ['EXPRESS', 'STANDARD'] as const) {
      const [, machine] = stateMachine(type);
      const substitutions = machine.Properties.DefinitionSubstitutions as Record<string, unknown>;
      expect(Object.keys(substitutions).sort(), type).toEqual(
        [
          ...functionsOf(type).map((fn) => fn.substitution),
          ...(type === 'EXPRESS' ? [LONG_WAITS_SUBSTITUTION] : []),
        ].sort(),
      );
      for (const fn of functionsOf(type)) {
        expect(getAttTargets(substitutions[fn.substitution])).toEqual([functionByEntry(fn.entry)]);
      }
      if (type === 'EXPRESS') expect(refOf(substitutions[LONG_WAITS_SUBSTITUTION])).toBe(waitsId);
    }
    // Between them, every task function is used.
    expect(new Set([...functionsOf('EXPRESS'), ...functionsOf('STANDARD')]).size).toBe(
      Object.keys(WORKFLOW_FUNCTIONS).length,
    );
  });

  it('lets each state machine invoke exactly its task functions, unqualified, and the fast path start executions of the Standard machine only', () => {
    const [waitsId] = stateMachine('STANDARD');
    for (const type of ['EXPRESS', 'STANDARD'] as const) {
      const [, machine] = stateMachine(type);
      const [roleId] = getAttTargets(machine.Properties.RoleArn);
      const statements = statementsOfRole(template, roleId as string);
      const invokes = grantsOf(statements, 'lambda:InvokeFunction').flat();
      const expected = functionsOf(type).map((fn) =>
        JSON.stringify({ 'Fn::GetAtt': [functionByEntry(fn.entry), 'Arn'] }),
      );
      expect(invokes.sort(), type).toEqual(expected.sort());
      expect(grantsOf(statements, 'states:StartExecution'), type).toEqual(
        type === 'EXPRESS' ? [[JSON.stringify({ Ref: waitsId })]] : [],
      );
    }
  });

  it('lets the task functions only read and conditionally update the table, and only the publisher and the catch-all (a parking is announced) use the bus', () => {
    const [busId] = resourcesOf(template, 'AWS::Events::EventBus').keys();
    for (const fn of Object.values(WORKFLOW_FUNCTIONS)) {
      const id = functionByEntry(fn.entry);
      const statements = statementsOfFunction(template, id);
      const actions = [...allowedActions(statements)].filter(
        (action) => !action.startsWith('xray:') && !action.startsWith('logs:'),
      );
      const expected = ['dynamodb:GetItem', 'dynamodb:UpdateItem'];
      if (fn === WORKFLOW_FUNCTIONS.publishStatusEvents || fn === WORKFLOW_FUNCTIONS.parkTransfer)
        expected.push('events:PutEvents');
      expect(actions.sort(), fn.entry).toEqual(expected.sort());
      for (const resources of grantsOf(statements, 'dynamodb:UpdateItem')) {
        expect(resources).toEqual([JSON.stringify({ 'Fn::GetAtt': [tableId(), 'Arn'] })]);
      }
    }
    const publisher = statementsOfFunction(
      template,
      functionByEntry(WORKFLOW_FUNCTIONS.publishStatusEvents.entry),
    );
    expect(grantsOf(publisher, 'events:PutEvents')).toEqual([
      [JSON.stringify({ 'Fn::GetAtt': [busId, 'Arn'] })],
    ]);
    const catchAll = statementsOfFunction(template, functionByEntry(WORKFLOW_FUNCTIONS.parkTransfer.entry));
    expect(grantsOf(catchAll, 'events:PutEvents')).toEqual([
      [JSON.stringify({ 'Fn::GetAtt': [busId, 'Arn'] })],
    ]);
    const environment = functions.get(functionByEntry(WORKFLOW_FUNCTIONS.publishStatusEvents.entry))
      ?.Properties.Environment as { Variables: Record<string, unknown> };
    expect(refOf(environment.Variables.EVENT_BUS_NAME)).toBe(busId);
  });

  it('lets initiation and cancellation start executions of the fast path only', () => {
    const [machineId] = stateMachine();
    for (const id of [
      routeFunction('/v1/payments/credit-transfers', 'POST'),
      routeFunction('/v1/payments/credit-transfers/{paymentId}/cancellation', 'POST'),
    ]) {
      const statements = statementsOfFunction(template, id);
      expect(grantsOf(statements, 'states:StartExecution')).toEqual([[JSON.stringify({ Ref: machineId })]]);
      const environment = functions.get(id)?.Properties.Environment as { Variables: Record<string, unknown> };
      expect(refOf(environment.Variables.STATE_MACHINE_ARN)).toBe(machineId);
    }
    const cancel = allowedActions(
      statementsOfFunction(
        template,
        routeFunction('/v1/payments/credit-transfers/{paymentId}/cancellation', 'POST'),
      ),
    );
    expect(cancel.has('dynamodb:UpdateItem')).toBe(true);
    expect(cancel.has('dynamodb:PutItem')).toBe(false);
  });

  it('lets the reconciler query only the recovery index, update transfers, start executions of the fast path, announce parkings and held transfers', () => {
    const [machineId] = stateMachine();
    const reconciler = functionByEntry(RECONCILER_ENTRY);
    const statements = statementsOfFunction(template, reconciler);
    const actions = [...allowedActions(statements)].filter(
      (action) => !action.startsWith('xray:') && !action.startsWith('logs:'),
    );
    expect(actions.sort()).toEqual(
      [
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        'lambda:InvokeFunction',
        'states:StartExecution',
      ].sort(),
    );
    expect(grantsOf(statements, 'lambda:InvokeFunction')).toEqual([
      [
        JSON.stringify({
          'Fn::GetAtt': [functionByEntry(WORKFLOW_FUNCTIONS.publishStatusEvents.entry), 'Arn'],
        }),
      ],
    ]);
    const [queryResources] = grantsOf(statements, 'dynamodb:Query');
    expect(queryResources).toHaveLength(2);
    expect(queryResources?.[1]).toContain(`/index/${RECOVERY_INDEX.indexName}`);
    expect(grantsOf(statements, 'states:StartExecution')).toEqual([[JSON.stringify({ Ref: machineId })]]);
  });

  it('lets the batch request only invoke the batch lifecycle starter, which reads batch items, counts transfers against limits, starts executions and announces held transfers', () => {
    const [machineId] = stateMachine();
    const [starter] = [...functions.entries()].find(([, fn]) =>
      String(fn.Properties.Description ?? '').startsWith('Batches: starts the lifecycles'),
    ) ?? [undefined];
    if (starter === undefined) throw new Error(`No function for ${BATCH_LIFECYCLES_ENTRY}`);
    const submit = routeFunction('/v1/payments/credit-transfer-batches', 'POST');
    const submitStatements = statementsOfFunction(template, submit);
    expect(grantsOf(submitStatements, 'lambda:InvokeFunction')).toEqual([
      [JSON.stringify({ 'Fn::GetAtt': [starter, 'Arn'] })],
    ]);
    // The request no longer starts executions itself.
    expect(allowedActions(submitStatements).has('states:StartExecution')).toBe(false);
    const environment = functions.get(submit)?.Properties.Environment as {
      Variables: Record<string, unknown>;
    };
    expect(refOf(environment.Variables.BATCH_LIFECYCLES_FUNCTION)).toBe(starter);

    const statements = statementsOfFunction(template, starter);
    const actions = [...allowedActions(statements)].filter(
      (action) => !action.startsWith('xray:') && !action.startsWith('logs:'),
    );
    // The dead-letter destination: Lambda sends a failed event there with the function's role.
    expect(actions.sort()).toEqual(
      [
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'lambda:InvokeFunction',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
        'states:StartExecution',
      ].sort(),
    );
    expect(grantsOf(statements, 'states:StartExecution')).toEqual([[JSON.stringify({ Ref: machineId })]]);
    expect(grantsOf(statements, 'lambda:InvokeFunction')).toEqual([
      [
        JSON.stringify({
          'Fn::GetAtt': [functionByEntry(WORKFLOW_FUNCTIONS.publishStatusEvents.entry), 'Arn'],
        }),
      ],
    ]);
    const reads = statements.filter((statement) =>
      (Array.isArray(statement.Action) ? statement.Action : [statement.Action]).includes('dynamodb:GetItem'),
    );
    // The batch; a transfer and its limit counters only to count it against its tenant's limits.
    expect(reads.map((statement) => (statement as { Condition?: unknown }).Condition)).toEqual([
      { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['BATCH#*'] } },
      { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PAYMENT#*', 'LIMIT_USAGE#*'] } },
    ]);
    // Failed runs are retried twice within the hour, then kept in a dead-letter queue.
    const [config] = [...resourcesOf(template, 'AWS::Lambda::EventInvokeConfig').values()].filter(
      (candidate) => refOf(candidate.Properties.FunctionName) === starter,
    );
    expect(config?.Properties).toMatchObject({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 });
  });

  it('lets exactly the initiation, the batch lifecycle starter and the reconciler invoke the publish step function outside an execution (held transfers are announced, no workflow started), each told its name', () => {
    const publisher = functionByEntry(WORKFLOW_FUNCTIONS.publishStatusEvents.entry);
    const publisherArn = JSON.stringify({ 'Fn::GetAtt': [publisher, 'Arn'] });
    const invokers = [...functions.keys()].filter((id) =>
      grantsOf(statementsOfFunction(template, id), 'lambda:InvokeFunction').flat().includes(publisherArn),
    );
    const [starter] = [...functions.entries()].find(([, fn]) =>
      String(fn.Properties.Description ?? '').startsWith('Batches: starts the lifecycles'),
    ) ?? [undefined];
    const expected = [
      routeFunction('/v1/payments/credit-transfers', 'POST'),
      starter,
      functionByEntry(RECONCILER_ENTRY),
    ];
    expect(invokers.sort()).toEqual(expected.sort());
    for (const id of invokers) {
      const environment = functions.get(id)?.Properties.Environment as { Variables: Record<string, unknown> };
      expect(refOf(environment.Variables.PUBLISH_STATUS_EVENTS_FUNCTION), id).toBe(publisher);
    }
    // The approval decisions start the lifecycle of an approved transfer, they announce nothing.
    const approve = routeFunction('/v1/payments/credit-transfers/{paymentId}/approvals', 'POST');
    expect(allowedActions(statementsOfFunction(template, approve)).has('lambda:InvokeFunction')).toBe(false);
  });

  it('runs the reconciler every 5 minutes from an EventBridge Scheduler schedule whose role may only invoke it', () => {
    const reconciler = functionByEntry(RECONCILER_ENTRY);
    const schedules = [...resourcesOf(template, 'AWS::Scheduler::Schedule').values()];
    expect(schedules).toHaveLength(1);
    const schedule = schedules[0] as Resource;
    expect(schedule.Properties.ScheduleExpression).toBe('rate(5 minutes)');
    const target = schedule.Properties.Target as { Arn: unknown; RoleArn: unknown };
    expect(getAttTargets(target.Arn)).toEqual([reconciler]);
    const [roleId] = getAttTargets(target.RoleArn);
    const statements = statementsOfRole(template, roleId as string);
    expect([...allowedActions(statements)]).toEqual(['lambda:InvokeFunction']);
    expect(grantsOf(statements, 'lambda:InvokeFunction')).toEqual([
      [JSON.stringify({ 'Fn::GetAtt': [reconciler, 'Arn'] })],
    ]);
  });

  it('has one event bus for the status events, and the recovery index on the table', () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
    const [, table] = [...resourcesOf(template, 'AWS::DynamoDB::Table').entries()][0] as [string, Resource];
    const indexes = table.Properties.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[];
    expect(indexes.find((index) => index.IndexName === RECOVERY_INDEX.indexName)?.KeySchema).toEqual([
      { AttributeName: RECOVERY_INDEX.partitionKey, KeyType: 'HASH' },
      { AttributeName: RECOVERY_INDEX.sortKey, KeyType: 'RANGE' },
    ]);
  });
});
