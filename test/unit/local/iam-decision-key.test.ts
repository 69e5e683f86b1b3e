import { describe, expect, it } from 'vitest';
import { decisionKeys } from '#local/iam-decision-key';
import { IamEnforcer, type IamRequest } from '#local/iam-enforcement';
import { type StackPolicies, stackIam, stackPolicies } from '#local/iam-policies';

/**
 * A remembered IAM decision answers a later request only when no policy of the stack can tell
 * the two apart: shown on the stack's own policies, against a decision made afresh for each.
 */
const TABLE = 'credit-transfers';
const TABLE_ARN = `arn:aws:dynamodb:local:000000000000:table/${TABLE}`;
const policies = (): StackPolicies => stackPolicies(stackIam(), { tableName: TABLE });
const keyOf = decisionKeys(policies());
const getItem = (...keys: string[]): IamRequest => ({
  action: 'dynamodb:GetItem',
  resource: TABLE_ARN,
  context: { 'dynamodb:LeadingKeys': keys },
});

describe('the key a decision is remembered by', () => {
  it("is shared by two transfers' keys, which the policies match by the same pattern", () => {
    expect(keyOf('GetCreditTransferStatus', getItem('PAYMENT#t1#p1'))).toBe(
      keyOf('GetCreditTransferStatus', getItem('PAYMENT#t2#p2')),
    );
  });

  it('tells apart keys that some pattern matches differently', () => {
    const keys = ['PAYMENT#t#p', 'PAYMENT_LIST#t#ALL', 'CLIENT#c', 'XPAYMENT#t#p'];
    const decisionKeysOf = keys.map((key) => keyOf('GetCreditTransferStatus', getItem(key)));
    expect(new Set(decisionKeysOf).size).toBe(keys.length);
    // Keys no pattern takes are alike to every policy.
    for (const unmatched of ['PAYMENT', 'payment#t#p', ''])
      expect(keyOf('GetCreditTransferStatus', getItem(unmatched))).toBe(
        keyOf('GetCreditTransferStatus', getItem('XPAYMENT#t#p')),
      );
    // One key outside the grant in a batch is not the batch without it.
    expect(keyOf('ListCreditTransfers', getItem('PAYMENT#a', 'CLIENT#c'))).not.toBe(
      keyOf('ListCreditTransfers', getItem('PAYMENT#a')),
    );
  });

  it('keeps the function, the action and the resource', () => {
    const request = getItem('PAYMENT#t#p');
    const key = keyOf('GetCreditTransferStatus', request);
    expect(keyOf('ListEvents', request)).not.toBe(key);
    expect(keyOf('GetCreditTransferStatus', { ...request, action: 'dynamodb:PutItem' })).not.toBe(key);
    expect(keyOf('GetCreditTransferStatus', { ...request, resource: `${TABLE_ARN}/index/x` })).not.toBe(key);
  });

  it('keeps the value where a condition compares it otherwise than by pattern, and the presence of any key', () => {
    const put = (context: Record<string, string>): IamRequest => ({
      action: 'sqs:SendMessage',
      resource: 'arn:aws:sqs:local:000000000000:q',
      context,
    });
    // aws:SecureTransport is read by a Bool condition.
    expect(keyOf('WebhookDeliver', put({ 'aws:SecureTransport': 'true' }))).not.toBe(
      keyOf('WebhookDeliver', put({ 'aws:SecureTransport': 'false' })),
    );
    // No policy names dynamodb:Attributes: which attributes does not matter, that it is given does.
    const withAttributes = (names: string[]) => ({
      ...getItem('PAYMENT#t#p'),
      context: { ...getItem('PAYMENT#t#p').context, 'dynamodb:Attributes': names },
    });
    expect(keyOf('GetCreditTransferStatus', withAttributes(['a']))).toBe(
      keyOf('GetCreditTransferStatus', withAttributes(['b'])),
    );
    expect(keyOf('GetCreditTransferStatus', withAttributes(['a']))).not.toBe(
      keyOf('GetCreditTransferStatus', getItem('PAYMENT#t#p')),
    );
  });

  it('keeps every value when a policy holds a policy variable', () => {
    const withVariable = policies();
    const [fn] = Object.values(withVariable.functions);
    fn?.identityPolicies[0]?.policy.Statement.push({
      Effect: 'Allow',
      Action: 'dynamodb:GetItem',
      Resource: '*',
      Condition: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable, not a template
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['${aws:PrincipalTag/tenant}*'] },
      },
    });
    const exact = decisionKeys(withVariable);
    expect(exact('GetCreditTransferStatus', getItem('PAYMENT#t1#p1'))).not.toBe(
      exact('GetCreditTransferStatus', getItem('PAYMENT#t2#p2')),
    );
  });
});

describe('a remembered decision', () => {
  it("is the decision IAM makes afresh, for every function's table calls on keys of every kind", async () => {
    const stack = policies();
    const patterns = [
      ...new Set(
        JSON.stringify(stack)
          .match(/"[A-Z_]+#\*"|"SIGNING_KEYS\*"/g)
          ?.map((pattern) => pattern.slice(1, -2)),
      ),
    ];
    expect(patterns.length).toBeGreaterThan(10);
    // Two keys of each pattern the policies name, then keys near them that no pattern should take alike.
    const keys = patterns.flatMap((prefix) => [`${prefix}a#1`, `${prefix}b#2`, `X${prefix}a`]);
    keys.push('PAYMENT', 'payment#a#1', '');
    const remembering = new IamEnforcer(stack, undefined);
    const requests = Object.keys(stack.functions).flatMap((fn) =>
      ['dynamodb:GetItem', 'dynamodb:UpdateItem'].flatMap((action) =>
        keys.map((key) => ({ fn, request: { ...getItem(key), action } })),
      ),
    );
    const disagreements: string[] = [];
    let remembered = 0;
    for (const { fn, request } of requests) {
      const before = remembering.rememberedCount();
      const answer = (await remembering.decide(fn, request)).allowed;
      if (remembering.rememberedCount() === before) remembered++;
      const afresh = (await remembering.evaluate(fn, request)).allowed;
      if (answer !== afresh) disagreements.push(`${fn} ${request.action} ${key(request)}: ${answer}`);
    }
    expect(disagreements).toEqual([]);
    // Most answers came from memory: the cache is used, not bypassed.
    expect(remembered).toBeGreaterThan(requests.length / 4);
  });
});

const key = (request: IamRequest) => JSON.stringify(request.context['dynamodb:LeadingKeys']);
