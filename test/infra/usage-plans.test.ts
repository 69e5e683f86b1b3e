import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT_RATE_LIMIT } from '#domain/access/tenant-rate-limit';
import { ROUTES } from '#routes';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesized } from './synth.ts';
import { methodsByRoute, type Resource, refOf, resourcesOf } from './template-queries.ts';

/**
 * Per-tenant limits on AWS: the API reads its API key from the authorizer (one key per tenant),
 * every authorized method requires it, and the stack's default usage plan throttles each key at
 * the documented default; past it API Gateway answers THROTTLED with the problem body and Retry-After.
 */
let dev: Synthesized;

beforeAll(async () => {
  [dev] = await synthesized({});
}, SYNTH_TIMEOUT_MS);

describe('per-tenant rate limits on AWS', () => {
  it('takes the API key from the authorizer', () => {
    const [api] = [...resourcesOf(dev.template, 'AWS::ApiGateway::RestApi').values()];
    expect(api?.Properties.ApiKeySourceType).toBe('AUTHORIZER');
  });

  it('requires the key on every method with a scope, and on no public one', () => {
    const methods = methodsByRoute(dev.template);
    for (const route of ROUTES) {
      const method = methods.get(`${route.method} ${route.path}`);
      expect(method, `${route.method} ${route.path}`).toBeDefined();
      expect(method?.Properties.ApiKeyRequired === true, `${route.method} ${route.path}`).toBe(
        route.scope !== undefined,
      );
    }
  });

  it('has a default usage plan on the stage with the default rate and burst, named in an output', () => {
    const plans = resourcesOf(dev.template, 'AWS::ApiGateway::UsagePlan');
    expect(plans.size).toBe(1);
    const [planId, plan] = [...plans][0] as [string, Resource];
    expect(plan.Properties.Throttle).toEqual({
      RateLimit: DEFAULT_TENANT_RATE_LIMIT.ratePerSecond,
      BurstLimit: DEFAULT_TENANT_RATE_LIMIT.burst,
    });
    expect(DEFAULT_TENANT_RATE_LIMIT).toEqual({ ratePerSecond: 25, burst: 50 });
    expect(plan.Properties.Quota).toBeUndefined();
    const [stage] = (plan.Properties.ApiStages as { ApiId: unknown; Stage: unknown }[]) ?? [];
    expect(refOf(stage?.ApiId)).toBe([...resourcesOf(dev.template, 'AWS::ApiGateway::RestApi').keys()][0]);
    expect(refOf(stage?.Stage)).toBe([...resourcesOf(dev.template, 'AWS::ApiGateway::Stage').keys()][0]);
    expect(refOf(dev.template.toJSON().Outputs?.DefaultUsagePlanId?.Value)).toBe(planId);
  });

  it('answers throttling and a used-up quota with 429, Retry-After and the problem body', () => {
    const responses = [...resourcesOf(dev.template, 'AWS::ApiGateway::GatewayResponse').values()];
    for (const type of ['THROTTLED', 'QUOTA_EXCEEDED']) {
      const response = responses.find((r) => r.Properties.ResponseType === type);
      if (response === undefined) throw new Error(`no gateway response ${type}`);
      expect(response.Properties.StatusCode, type).toBe('429');
      const headers = response.Properties.ResponseParameters as Record<string, string>;
      expect(headers['gatewayresponse.header.Retry-After'], type).toMatch(/^'[1-9]\d*'$/);
      expect(headers['gatewayresponse.header.Content-Type'], type).toBe("'application/problem+json'");
      const body = JSON.parse(
        (response.Properties.ResponseTemplates as Record<string, string>)['application/json'] as string,
      );
      expect(body, type).toMatchObject({
        status: 429,
        error: 'rate_limited',
        error_description: expect.any(String),
      });
    }
  });
});
