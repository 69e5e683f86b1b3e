import type { PolicyDocument } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { isAllowed, routeArn, stageArnOf } from '#adapters/access/route-policy';

const STAGE = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/live';

const policy = (...Statement: PolicyDocument['Statement']): PolicyDocument => ({
  Version: '2012-10-17',
  Statement,
});

describe('isAllowed evaluates a policy as API Gateway does', () => {
  it('allows a method ARN an Allow names exactly', () => {
    const document = policy({
      Effect: 'Allow',
      Action: 'execute-api:Invoke',
      Resource: `${STAGE}/GET/health`,
    });

    expect(isAllowed(document, `${STAGE}/GET/health`)).toBe(true);
  });

  it('denies what no Allow names', () => {
    const document = policy({
      Effect: 'Allow',
      Action: 'execute-api:Invoke',
      Resource: `${STAGE}/GET/health`,
    });

    expect(isAllowed(document, `${STAGE}/POST/health`)).toBe(false);
  });

  it('denies everything with no statement', () => {
    expect(isAllowed(policy(), `${STAGE}/GET/health`)).toBe(false);
  });

  it('lets an explicit Deny win over an Allow', () => {
    const document = policy(
      { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: `${STAGE}/*` },
      { Effect: 'Deny', Action: 'execute-api:Invoke', Resource: [`${STAGE}/POST/v1/*`] },
    );

    expect(isAllowed(document, `${STAGE}/GET/v1/payments`)).toBe(true);
    expect(isAllowed(document, `${STAGE}/POST/v1/payments`)).toBe(false);
  });

  it('matches * across path segments and ? as one character', () => {
    const document = policy(
      { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: `${STAGE}/GET/v1/payments/*/status` },
      { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: `${STAGE}/GET/v?/health` },
    );

    expect(isAllowed(document, `${STAGE}/GET/v1/payments/p-1/status`)).toBe(true);
    expect(isAllowed(document, `${STAGE}/GET/v1/payments/a/b/status`)).toBe(true);
    expect(isAllowed(document, `${STAGE}/GET/v1/payments/p-1/history`)).toBe(false);
    expect(isAllowed(document, `${STAGE}/GET/v2/health`)).toBe(true);
    expect(isAllowed(document, `${STAGE}/GET/v10/health`)).toBe(false);
  });

  it('takes the other characters of a pattern literally', () => {
    const document = policy({ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: `${STAGE}/GET/a.b` });

    expect(isAllowed(document, `${STAGE}/GET/axb`)).toBe(false);
  });

  it('matches actions with wildcards and without regard to case', () => {
    const document = policy({ Effect: 'Allow', Action: ['execute-api:*'], Resource: '*' });

    expect(isAllowed(document, `${STAGE}/GET/x`)).toBe(true);
    expect(
      isAllowed(policy({ Effect: 'Allow', Action: 'Execute-API:invoke', Resource: '*' }), `${STAGE}/GET/x`),
    ).toBe(true);
    expect(
      isAllowed(policy({ Effect: 'Allow', Action: 's3:GetObject', Resource: '*' }), `${STAGE}/GET/x`),
    ).toBe(false);
  });

  it('matches resources with regard to case, even a pattern it has just matched as an action', () => {
    const pattern = `${STAGE}/GET/Path`;
    const document = policy({ Effect: 'Allow', Action: pattern, Resource: pattern });

    expect(isAllowed(document, pattern, pattern.toLowerCase())).toBe(true);
    expect(isAllowed(document, pattern.toLowerCase(), pattern.toLowerCase())).toBe(false);
  });

  it('applies NotResource and NotAction', () => {
    const document = policy(
      { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: '*' },
      { Effect: 'Deny', NotAction: 's3:*', NotResource: `${STAGE}/GET/*` },
    );

    expect(isAllowed(document, `${STAGE}/GET/x`)).toBe(true);
    expect(isAllowed(document, `${STAGE}/POST/x`)).toBe(false);
  });

  it('never allows through a statement with a Condition', () => {
    const document = policy({
      Effect: 'Allow',
      Action: 'execute-api:Invoke',
      Resource: '*',
      Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } },
    });

    expect(isAllowed(document, `${STAGE}/GET/x`)).toBe(false);
  });
});

describe('method ARNs', () => {
  it('keep the API and stage of the incoming method ARN', () => {
    expect(stageArnOf(`${STAGE}/GET/v1/payments/credit-transfers`)).toBe(STAGE);
    expect(stageArnOf('arn:aws-cn:execute-api:cn-north-1:123456789012:abc/dev/POST/x')).toBe(
      'arn:aws-cn:execute-api:cn-north-1:123456789012:abc/dev',
    );
  });

  it('turn every path parameter of a route into a wildcard', () => {
    expect(routeArn(STAGE, { method: 'POST', path: '/v1/payments/{paymentId}/cancellation' })).toBe(
      `${STAGE}/POST/v1/payments/*/cancellation`,
    );
  });

  it('refuse what is not an execute-api method ARN', () => {
    expect(() => stageArnOf('arn:aws:lambda:eu-west-1:123456789012:function:x')).toThrow();
  });
});
