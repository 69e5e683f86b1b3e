import { describe, expect, it } from 'vitest';
import { dynamoDbRequests, IamEnforcer } from '#local/iam-enforcement';
import { stackIam, stackPolicies } from '#local/iam-policies';

/**
 * The local IAM check against the stack's own policies (the synthesized `dev` template): the
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
    const keys = [{ pk: 'TENANT#a', sk: '1' }];
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
      ExpressionAttributeValues: { ':p': 'TENANT#a' },
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
