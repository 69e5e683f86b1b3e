import { LambdaServiceException } from '@aws-sdk/client-lambda';
import { SQSServiceException } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { IamEnforcer } from '#local/iam-enforcement';
import { type IamCache, stackIam, stackPolicies } from '#local/iam-policies';
import type { ServiceCall } from '#local/service-calls';

/**
 * The calls AWS services make for the stack, checked as on AWS against the `prod` template: the
 * state machines invoking their tasks (their roles), API Gateway invoking the authorizer and the
 * routes' functions (each function's permissions), EventBridge sending to the webhook queue (the
 * queue's policy), the schedules invoking the reconciler (its role) and the retry sender (its
 * permission). Each grant is then taken out of a copy of the template: the call it carried is
 * denied, as AWS would deny it.
 */
const TABLE = 'credit-transfers';
type Resources = IamCache['resources'];
type Statement = { Action?: unknown; Principal?: unknown; Effect?: string };

const enforcerOf = (edit: (resources: Resources) => void = () => undefined) => {
  const cache = structuredClone(stackIam('prod'));
  edit(cache.resources);
  return new IamEnforcer(stackPolicies(cache, { tableName: TABLE }), undefined);
};

/** The logical ids of the resources of a type whose logical id starts with `prefix`. */
const idsOf = (resources: Resources, type: string, prefix: string): string[] =>
  Object.keys(resources).filter((id) => resources[id]?.Type === type && id.startsWith(prefix));

/** Takes `action` out of every statement of the role policies attached to the role `rolePrefix`. */
const withoutRoleAction = (resources: Resources, rolePrefix: string, action: string): void => {
  const [role] = idsOf(resources, 'AWS::IAM::Role', rolePrefix);
  if (role === undefined) throw new Error(`no role ${rolePrefix}`);
  let removed = 0;
  for (const id of idsOf(resources, 'AWS::IAM::Policy', '')) {
    const properties = resources[id]?.Properties as {
      Roles: { Ref?: string }[];
      PolicyDocument: { Statement: Statement[] };
    };
    if (!properties.Roles.some((r) => r.Ref === role)) continue;
    properties.PolicyDocument.Statement = properties.PolicyDocument.Statement.flatMap((statement) => {
      const actions = [statement.Action].flat();
      if (!actions.includes(action)) return [statement];
      removed++;
      const left = actions.filter((a) => a !== action);
      return left.length === 0 ? [] : [{ ...statement, Action: left }];
    });
  }
  if (removed === 0) throw new Error(`${rolePrefix} had no ${action}`);
};

/** Removes the resources (a permission, a policy) whose logical id starts with `prefix`. */
const without = (resources: Resources, type: string, prefix: string): void => {
  const ids = idsOf(resources, type, prefix);
  if (ids.length === 0) throw new Error(`no ${type} ${prefix}`);
  for (const id of ids) delete resources[id];
};

const denied = (Exception: new (...args: never[]) => Error, message: RegExp) =>
  expect.objectContaining({
    name: 'AccessDeniedException',
    constructor: Exception,
    message: expect.stringMatching(message),
  });

const STATUS_ROUTE: ServiceCall = {
  kind: 'route',
  functionName: 'GetCreditTransferStatus',
  method: 'GET',
  path: '/v1/payments/credit-transfers/p-1/status',
};

describe('with every grant of the prod template', () => {
  const enforcer = enforcerOf();
  const allowed = (call: ServiceCall) =>
    expect(enforcer.checkServiceCall(call), JSON.stringify(call)).resolves.toBeUndefined();

  it('lets each state machine invoke its own tasks, and only those', async () => {
    await allowed({ kind: 'task', machine: 'EXPRESS', substitution: 'ValidateCheckAndSubmitFunctionArn' });
    await allowed({ kind: 'task', machine: 'STANDARD', substitution: 'SubmitToClearingFunctionArn' });
    // The machine of long waits never validates: the template gives it no such task.
    await expect(
      enforcer.checkServiceCall({
        kind: 'task',
        machine: 'STANDARD',
        substitution: 'ValidateCheckAndSubmitFunctionArn',
      }),
    ).rejects.toEqual(
      denied(
        LambdaServiceException,
        /could not read the STANDARD state machine's ValidateCheckAndSubmitFunctionArn/,
      ),
    );
  });

  it("lets API Gateway invoke the authorizer, and each route's function for its own method and path only", async () => {
    await allowed({ kind: 'authorizer' });
    await allowed(STATUS_ROUTE);
    await expect(
      enforcer.checkServiceCall({ ...STATUS_ROUTE, method: 'POST', path: '/v1/payments/credit-transfers' }),
    ).rejects.toEqual(
      denied(
        LambdaServiceException,
        /apigateway\.amazonaws\.com is not authorized to perform: lambda:InvokeFunction/,
      ),
    );
  });

  it('lets EventBridge send to the webhook queue, and the schedules invoke their functions', async () => {
    await allowed({ kind: 'bus-to-queue', functionName: 'WebhookIngest' });
    await allowed({ kind: 'scheduled', functionName: 'Reconciler' });
    await allowed({ kind: 'scheduled', functionName: 'WebhookDeliver' });
    await expect(
      enforcer.checkServiceCall({ kind: 'scheduled', functionName: 'ListEvents' }),
    ).rejects.toEqual(denied(LambdaServiceException, /could not read a schedule invoking ListEvents/));
  });
});

describe('with one grant taken out of the template', () => {
  it("fails the fast path's tasks without its role's lambda:InvokeFunction", async () => {
    const enforcer = enforcerOf((r) =>
      withoutRoleAction(r, 'LifecycleFastPathRole', 'lambda:InvokeFunction'),
    );
    await expect(
      enforcer.checkServiceCall({
        kind: 'task',
        machine: 'EXPRESS',
        substitution: 'ValidateCheckAndSubmitFunctionArn',
      }),
    ).rejects.toEqual(
      denied(
        LambdaServiceException,
        /assumed-role\/\w+\/LifecycleFastPath is not authorized to perform: lambda:InvokeFunction/,
      ),
    );
    // The other machine keeps its own grant.
    await expect(
      enforcer.checkServiceCall({
        kind: 'task',
        machine: 'STANDARD',
        substitution: 'PollClearingFunctionArn',
      }),
    ).resolves.toBeUndefined();
  });

  it("fails the long waits' tasks without their role's lambda:InvokeFunction", async () => {
    const enforcer = enforcerOf((r) =>
      withoutRoleAction(r, 'LifecycleStateMachineRole', 'lambda:InvokeFunction'),
    );
    await expect(
      enforcer.checkServiceCall({
        kind: 'task',
        machine: 'STANDARD',
        substitution: 'PollClearingFunctionArn',
      }),
    ).rejects.toEqual(denied(LambdaServiceException, /LifecycleLongWaits is not authorized/));
  });

  it("refuses API Gateway the authorizer without the authorizer's permission", async () => {
    const enforcer = enforcerOf((r) => without(r, 'AWS::Lambda::Permission', 'ApiAuthorizerFunction'));
    await expect(enforcer.checkServiceCall({ kind: 'authorizer' })).rejects.toEqual(
      denied(
        LambdaServiceException,
        /apigateway\.amazonaws\.com is not authorized to perform: lambda:InvokeFunction on resource: \S+ApiAuthorizerFunction/,
      ),
    );
    await expect(enforcer.checkServiceCall(STATUS_ROUTE)).resolves.toBeUndefined();
  });

  it("refuses API Gateway a route's function without that route's permission", async () => {
    const enforcer = enforcerOf((r) =>
      without(r, 'AWS::Lambda::Permission', 'ApiRestApiv1paymentscredittransferspaymentIdstatusGET'),
    );
    await expect(enforcer.checkServiceCall(STATUS_ROUTE)).rejects.toEqual(
      denied(LambdaServiceException, /ApiGetCreditTransferStatusFunction/),
    );
    await expect(enforcer.checkServiceCall({ kind: 'authorizer' })).resolves.toBeUndefined();
  });

  it("refuses EventBridge the webhook queue without the queue policy's allow", async () => {
    const enforcer = enforcerOf((r) => {
      const [policy] = idsOf(r, 'AWS::SQS::QueuePolicy', 'WebhooksQueuePolicy');
      const properties = r[policy as string]?.Properties as { PolicyDocument: { Statement: Statement[] } };
      const document = properties.PolicyDocument;
      document.Statement = document.Statement.filter((statement) => statement.Effect !== 'Allow');
    });
    await expect(
      enforcer.checkServiceCall({ kind: 'bus-to-queue', functionName: 'WebhookIngest' }),
    ).rejects.toEqual(
      denied(
        SQSServiceException,
        /events\.amazonaws\.com is not authorized to perform: sqs:SendMessage on resource: \S+WebhooksQueue/,
      ),
    );
  });

  it('refuses the reconciler its schedule without the schedule role’s lambda:InvokeFunction', async () => {
    const enforcer = enforcerOf((r) =>
      withoutRoleAction(r, 'LifecycleSchedulerRole', 'lambda:InvokeFunction'),
    );
    await expect(
      enforcer.checkServiceCall({ kind: 'scheduled', functionName: 'Reconciler' }),
    ).rejects.toEqual(
      denied(
        LambdaServiceException,
        /ReconcilerSchedule is not authorized to perform: lambda:InvokeFunction/,
      ),
    );
  });

  it("refuses the retry sender its scheduled rule without the function's permission", async () => {
    const enforcer = enforcerOf((r) => without(r, 'AWS::Lambda::Permission', 'WebhooksDeliverySchedule'));
    await expect(
      enforcer.checkServiceCall({ kind: 'scheduled', functionName: 'WebhookDeliver' }),
    ).rejects.toEqual(
      denied(
        LambdaServiceException,
        /events\.amazonaws\.com is not authorized to perform: lambda:InvokeFunction/,
      ),
    );
  });
});
