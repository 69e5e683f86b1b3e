import { EventBridgeServiceException } from '@aws-sdk/client-eventbridge';
import { KMSServiceException } from '@aws-sdk/client-kms';
import { LambdaServiceException } from '@aws-sdk/client-lambda';
import { SFNServiceException } from '@aws-sdk/client-sfn';
import { SQSServiceException } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { StandInCall } from '#adapters/aws/stand-ins';
import { dynamoDbRequests, IamEnforcer } from '#local/iam-enforcement';
import { stackIam, stackPolicies } from '#local/iam-policies';

/**
 * The local IAM check against the stack's own policies (the synthesized `prod` template): the
 * request context each DynamoDB call gives IAM, and the decisions on it.
 */
const TABLE = 'credit-transfers';
const enforcer = new IamEnforcer(stackPolicies(stackIam(), { tableName: TABLE }), undefined);
const check = (fn: string, command: string, input: Record<string, unknown>) =>
  enforcer.check(fn, dynamoDbRequests(command, { TableName: TABLE, ...input }));

describe('the request context of a DynamoDB call', () => {
  it('names every partition of a batch, per table', () => {
    const [request] = dynamoDbRequests('BatchGetItemCommand', {
      RequestItems: {
        [TABLE]: {
          Keys: [
            { pk: 'TENANT#a', sk: '1' },
            { pk: { S: 'TENANT#b' }, sk: { S: '2' } },
          ],
        },
      },
    });
    expect(request?.context['dynamodb:LeadingKeys']).toEqual(['TENANT#a', 'TENANT#b']);
  });

  it('makes each item of a transaction a request of its own action', () => {
    const requests = dynamoDbRequests('TransactWriteItemsCommand', {
      TransactItems: [
        { Put: { TableName: TABLE, Item: { pk: 'TENANT#a', sk: '1' } } },
        { ConditionCheck: { TableName: TABLE, Key: { pk: 'CLIENT#c', sk: 'C' } } },
      ],
    });
    expect(requests.map((r) => [r.action, r.context['dynamodb:LeadingKeys']])).toEqual([
      ['dynamodb:PutItem', ['TENANT#a']],
      ['dynamodb:ConditionCheckItem', ['CLIENT#c']],
    ]);
  });

  it("reads a Query's partition on the index's own key, and the index's ARN", () => {
    const [request] = dynamoDbRequests('QueryCommand', {
      TableName: TABLE,
      IndexName: 'listByTenant',
      KeyConditionExpression: '#p = :p AND #o < :o',
      ExpressionAttributeNames: { '#p': 'listTenant', '#o': 'listOrder' },
      ExpressionAttributeValues: { ':p': 'TENANT#a', ':o': 'x' },
    });
    expect(request?.resource).toBe(`arn:aws:dynamodb:local:000000000000:table/${TABLE}/index/listByTenant`);
    expect(request?.context['dynamodb:LeadingKeys']).toEqual(['TENANT#a']);
  });
});

describe('decisions on the stack policies', () => {
  it('lets the authorizer read a client record, and nothing else of the kind', async () => {
    await expect(
      check('Authorizer', 'GetItemCommand', { Key: { pk: 'CLIENT#c', sk: 'CLIENT' } }),
    ).resolves.toBeUndefined();
    await expect(
      check('Authorizer', 'UpdateItemCommand', {
        Key: { pk: 'CLIENT#c', sk: 'CLIENT' },
        UpdateExpression: 'SET a = :a',
      }),
    ).rejects.toMatchObject({ name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } });
  });

  it('refuses a batch with one key outside the grant', async () => {
    const keys = [{ pk: 'PAYMENT#a#p', sk: 'CREDIT_TRANSFER' }];
    await expect(
      check('ListCreditTransfers', 'BatchGetItemCommand', { RequestItems: { [TABLE]: { Keys: keys } } }),
    ).resolves.toBeUndefined();
    await expect(
      check('ListCreditTransfers', 'BatchGetItemCommand', {
        RequestItems: { [TABLE]: { Keys: [...keys, { pk: 'CLIENT#c', sk: 'CLIENT' }] } },
      }),
    ).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });

  it('refuses a Query on an index the function was not granted', async () => {
    const query = (IndexName: string) => ({
      IndexName,
      KeyConditionExpression: 'listTenant = :p',
      ExpressionAttributeValues: { ':p': 'PAYMENT_LIST#a#ALL' },
    });
    await expect(
      check('ListCreditTransfers', 'QueryCommand', query('listByTenant')),
    ).resolves.toBeUndefined();
    await expect(check('ListEvents', 'QueryCommand', query('listByTenant'))).rejects.toMatchObject({
      name: 'AccessDeniedException',
    });
  });

  it('refuses the reconciler a Scan', async () => {
    await expect(check('Reconciler', 'ScanCommand', {})).rejects.toMatchObject({
      name: 'AccessDeniedException',
    });
  });
});

describe('decisions on the stand-ins of KMS, EventBridge, Step Functions, SQS and Lambda', () => {
  const standIn = (fn: string, call: StandInCall) => enforcer.check(fn, [enforcer.standInRequest(fn, call)]);
  const secretContext = (purpose = 'webhook-signing-secret') => ({
    'kms:EncryptionContext:purpose': purpose,
    'kms:EncryptionContext:tenant': 'tenant-a',
    'kms:EncryptionContext:webhookEndpoint': 'we_1',
    'kms:EncryptionContextKeys': ['purpose', 'tenant', 'webhookEndpoint'],
  });
  const denied = (service: new (...args: never[]) => Error) =>
    expect.objectContaining({ name: 'AccessDeniedException', constructor: service });

  it('lets the delivery function decrypt a secret only with its encryption context (the key policy)', async () => {
    const decrypt = (fn: string, context: Record<string, string | string[]>) =>
      standIn(fn, { action: 'kms:Decrypt', resource: 'WEBHOOK_SECRET_KEY_ID', context });
    await expect(decrypt('WebhookDeliver', secretContext())).resolves.toBeUndefined();
    await expect(decrypt('WebhookDeliver', secretContext('something-else'))).rejects.toEqual(
      denied(KMSServiceException),
    );
    const { 'kms:EncryptionContext:webhookEndpoint': _, ...withoutEndpoint } = secretContext();
    await expect(
      decrypt('WebhookDeliver', { ...withoutEndpoint, 'kms:EncryptionContextKeys': ['purpose', 'tenant'] }),
    ).rejects.toEqual(denied(KMSServiceException));
    // The function that seals may not open.
    await expect(decrypt('CreateWebhookEndpoint', secretContext())).rejects.toEqual(
      denied(KMSServiceException),
    );
  });

  it('lets only the token endpoint sign, and the authorizer read the public key', async () => {
    const sign = { action: 'kms:Sign', resource: 'SIGNING_KEY_IDS' } as const;
    await expect(standIn('IssueToken', sign)).resolves.toBeUndefined();
    await expect(standIn('Authorizer', sign)).rejects.toEqual(denied(KMSServiceException));
    await expect(
      standIn('Authorizer', { action: 'kms:GetPublicKey', resource: 'SIGNING_KEY_IDS' }),
    ).resolves.toBeUndefined();
  });

  it('lets only the publisher put status events on the bus (the bus policy)', async () => {
    const put = (fn: string, source: string) =>
      standIn(fn, {
        action: 'events:PutEvents',
        resource: 'EVENT_BUS_NAME',
        context: { 'events:source': source },
      });
    await expect(put('PublishStatusEvents', 'credit-transfers')).resolves.toBeUndefined();
    // Granted PutEvents for operations events, denied status events by the bus policy.
    await expect(put('ParkTransfer', 'credit-transfers.operations')).resolves.toBeUndefined();
    await expect(put('ParkTransfer', 'credit-transfers')).rejects.toEqual(
      denied(EventBridgeServiceException),
    );
    await expect(put('GetCreditTransferStatus', 'credit-transfers')).rejects.toEqual(
      denied(EventBridgeServiceException),
    );
  });

  it('lets the routes that start the lifecycle start it, and no other', async () => {
    const start = { action: 'states:StartExecution', resource: 'STATE_MACHINE_ARN' } as const;
    await expect(standIn('InitiateCreditTransfer', start)).resolves.toBeUndefined();
    await expect(standIn('GetCreditTransferStatus', start)).rejects.toEqual(denied(SFNServiceException));
  });

  it('lets the fast path (its state machine role) start executions of long waits, and no function', async () => {
    const handOver = { action: 'states:StartExecution', resource: 'LongWaitsStateMachineArn' } as const;
    await expect(standIn('LifecycleFastPath', handOver)).resolves.toBeUndefined();
    for (const fn of ['InitiateCreditTransfer', 'Reconciler', 'CancelCreditTransfer'])
      await expect(standIn(fn, handOver), fn).rejects.toEqual(denied(SFNServiceException));
    // Not the fast path itself: the two machines have ARNs of their own.
    await expect(
      standIn('LifecycleFastPath', { action: 'states:StartExecution', resource: 'STATE_MACHINE_ARN' }),
    ).rejects.toEqual(denied(SFNServiceException));
    expect(enforcer.standInRequest('LifecycleFastPath', handOver).resource).not.toBe(
      enforcer.standInRequest('InitiateCreditTransfer', { ...handOver, resource: 'STATE_MACHINE_ARN' })
        .resource,
    );
  });

  it('lets the batch route invoke the batch lifecycle starter, and no other function', async () => {
    const invoke = { action: 'lambda:InvokeFunction', resource: 'BATCH_LIFECYCLES_FUNCTION' } as const;
    await expect(standIn('SubmitCreditTransferBatch', invoke)).resolves.toBeUndefined();
    await expect(standIn('GetCreditTransferBatch', invoke)).rejects.toEqual(denied(LambdaServiceException));
    expect(enforcer.standInRequest('SubmitCreditTransferBatch', invoke).resource).toMatch(
      /^arn:aws:lambda:local:000000000000:function:/,
    );
  });

  it('lets the initiation, the batch lifecycle starter and the reconciler invoke the publish step function (announcing a held transfer), and no other function', async () => {
    const invoke = { action: 'lambda:InvokeFunction', resource: 'PUBLISH_STATUS_EVENTS_FUNCTION' } as const;
    for (const fn of ['InitiateCreditTransfer', 'StartBatchLifecycles', 'Reconciler'])
      await expect(standIn(fn, invoke), fn).resolves.toBeUndefined();
    for (const fn of ['DecideCreditTransferApproval', 'SubmitCreditTransferBatch', 'GetCreditTransferStatus'])
      await expect(standIn(fn, invoke), fn).rejects.toEqual(denied(LambdaServiceException));
    expect(enforcer.standInRequest('InitiateCreditTransfer', invoke).resource).toMatch(
      /^arn:aws:lambda:local:000000000000:function:.*PublishStatusEvents/,
    );
  });

  it('lets the webhook functions use their queues, and no other function', async () => {
    const wake = { action: 'sqs:SendMessage', resource: 'WEBHOOK_WAKE_UP_QUEUE_URL' } as const;
    await expect(standIn('WebhookDeliver', wake)).resolves.toBeUndefined();
    await expect(standIn('ListEvents', wake)).rejects.toEqual(denied(SQSServiceException));
    await expect(
      standIn('WebhookIngest', { action: 'sqs:ReceiveMessage', resource: 'EVENT_SOURCE_QUEUE' }),
    ).resolves.toBeUndefined();
    expect(enforcer.standInRequest('WebhookIngest', wake).resource).toMatch(
      /^arn:aws:sqs:local:000000000000:WebhooksWakeUps/,
    );
  });
});

describe('fails closed: what the check cannot read or evaluate is a denial naming it', () => {
  const deniedFor = (reason: RegExp) =>
    expect.objectContaining({ name: 'AccessDeniedException', message: expect.stringMatching(reason) });
  const listQuery = (KeyConditionExpression: string) => ({
    IndexName: 'listByTenant',
    KeyConditionExpression,
    ExpressionAttributeValues: { ':p': 'PAYMENT_LIST#a#ALL' },
  });

  it('refuses a Query whose key condition has its operands the other way round', async () => {
    await expect(check('ListCreditTransfers', 'QueryCommand', listQuery(':p = listTenant'))).rejects.toEqual(
      deniedFor(/could not read the key condition ":p = listTenant" has no "listTenant = :value"/),
    );
    // The same Query written as DynamoDB documents it is allowed.
    await expect(
      check('ListCreditTransfers', 'QueryCommand', listQuery('listTenant = :p')),
    ).resolves.toBeUndefined();
  });

  it('refuses a Query whose key condition cannot be parsed, or gives no string value', async () => {
    for (const expression of ['begins_with(listTenant, :p)', 'listTenant == :p', 'listTenant = :missing'])
      await expect(
        check('ListCreditTransfers', 'QueryCommand', listQuery(expression)),
        expression,
      ).rejects.toEqual(deniedFor(/could not read the key condition/));
    await expect(check('ListCreditTransfers', 'QueryCommand', { IndexName: 'listByTenant' })).rejects.toEqual(
      deniedFor(/could not read a Query without a KeyConditionExpression/),
    );
  });

  it('refuses an item call without its partition key, and a batch with one such item', async () => {
    await expect(check('GetCreditTransferStatus', 'GetItemCommand', { Key: { sk: 'x' } })).rejects.toEqual(
      deniedFor(/could not read the GetItem's Key names an item without a string pk/),
    );
    await expect(check('GetCreditTransferStatus', 'GetItemCommand', {})).rejects.toEqual(
      deniedFor(/could not read/),
    );
    await expect(
      check('ListCreditTransfers', 'BatchGetItemCommand', {
        RequestItems: { [TABLE]: { Keys: [{ pk: 'PAYMENT#a#p', sk: 'x' }, { sk: 'y' }] } },
      }),
    ).rejects.toEqual(deniedFor(/without a string pk/));
    await expect(
      check('InitiateCreditTransfer', 'PutItemCommand', { Item: { pk: { N: '1' }, sk: 'x' } }),
    ).rejects.toEqual(deniedFor(/without a string pk/));
  });

  it('refuses a command, an action or a resource it does not know', async () => {
    await expect(
      check('GetCreditTransferStatus', 'ExecuteStatementCommand', { Statement: 'SELECT * FROM t' }),
    ).rejects.toEqual(deniedFor(/could not read the command ExecuteStatementCommand/));
    await expect(
      enforcer.check('Authorizer', [
        {
          action: 'dynamodb:NoSuchAction',
          resource: `arn:aws:dynamodb:local:000000000000:table/${TABLE}`,
          context: {},
        },
      ]),
    ).rejects.toEqual(deniedFor(/could not evaluate the request: .*invalid\.action/));
    await expect(
      enforcer.check('Authorizer', [
        {
          action: 'dynamodb:GetItem',
          resource: 'not-an-arn',
          context: { 'dynamodb:LeadingKeys': ['CLIENT#c'] },
        },
      ]),
    ).rejects.toEqual(deniedFor(/could not evaluate the request/));
    await expect(
      enforcer.check('Authorizer', [
        enforcer.standInRequest('Authorizer', {
          action: 'kms:GetPublicKey',
          resource: 'NO_SUCH_KEY' as StandInCall['resource'],
        }),
      ]),
    ).rejects.toEqual(deniedFor(/could not read the resource NO_SUCH_KEY/));
  });

  it('refuses an allow that rests on ForAllValues over a key the request gives no value', async () => {
    const read = (keys: string[]) =>
      enforcer.check('Authorizer', [
        {
          action: 'dynamodb:GetItem',
          resource: `arn:aws:dynamodb:local:000000000000:table/${TABLE}`,
          context: { 'dynamodb:LeadingKeys': keys },
        },
      ]);
    await expect(read([])).rejects.toEqual(
      deniedFor(/could not evaluate ForAllValues:StringLike on dynamodb:LeadingKeys/),
    );
    await expect(read(['CLIENT#c'])).resolves.toBeUndefined();
  });
});
