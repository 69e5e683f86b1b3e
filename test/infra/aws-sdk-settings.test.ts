import { beforeAll, describe, expect, it } from 'vitest';
import { stageConfig } from '../../lib/stage-config.ts';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesized } from './synth.ts';
import { getAttTargets, type Resource, refOf, resourcesOf } from './template-queries.ts';

/** The AWS SDK's stage settings: endpoint variants on every function, provisioned concurrency per group. */

const environmentOf = (fn: Resource): Record<string, unknown> =>
  (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};

const describedAs = (synthesized: Synthesized, prefix: string): string => {
  const found = [...resourcesOf(synthesized.template, 'AWS::Lambda::Function')].find(([, fn]) =>
    String(fn.Properties.Description ?? '').startsWith(prefix),
  );
  if (found === undefined) throw new Error(`No function described as ${prefix}...`);
  return found[0];
};

describe('AWS SDK stage settings', () => {
  let defaults: Synthesized;
  let chosen: Synthesized;

  beforeAll(async () => {
    [defaults, chosen] = await synthesized(
      {},
      {
        fipsEndpoints: 'true',
        dualStackEndpoints: 'true',
        provisionedConcurrencyAuthorizer: '2',
        provisionedConcurrencyInitiation: '3',
      },
    );
  }, SYNTH_TIMEOUT_MS);

  it('sets the SDK’s FIPS and dual-stack variables on every function when asked, on none by default', () => {
    const functions = [...resourcesOf(chosen.template, 'AWS::Lambda::Function').values()];
    expect(functions.length).toBeGreaterThan(10);
    for (const fn of functions) {
      expect(environmentOf(fn)).toMatchObject({
        AWS_USE_FIPS_ENDPOINT: 'true',
        AWS_USE_DUALSTACK_ENDPOINT: 'true',
      });
    }
    for (const fn of resourcesOf(defaults.template, 'AWS::Lambda::Function').values()) {
      expect(environmentOf(fn)).not.toHaveProperty('AWS_USE_FIPS_ENDPOINT');
      expect(environmentOf(fn)).not.toHaveProperty('AWS_USE_DUALSTACK_ENDPOINT');
    }
  });

  it('keeps no instance warm by default', () => {
    expect(resourcesOf(defaults.template, 'AWS::Lambda::Alias').size).toBe(0);
  });

  it('keeps the asked number of instances warm for a group, invoked through its alias', () => {
    const aliases = [...resourcesOf(chosen.template, 'AWS::Lambda::Alias')];
    const warm = (functionId: string) =>
      aliases.find(([, alias]) => refOf(alias.Properties.FunctionName) === functionId);

    const authorizerId = describedAs(chosen, 'Verifies bearer access tokens');
    const initiationId = describedAs(chosen, 'POST /v1/payments/credit-transfers:');
    const [authorizerAlias, authorizer] = warm(authorizerId) ?? [];
    const [initiationAlias, initiation] = warm(initiationId) ?? [];
    expect(authorizer?.Properties.ProvisionedConcurrencyConfig).toEqual({
      ProvisionedConcurrentExecutions: 2,
    });
    expect(initiation?.Properties.ProvisionedConcurrencyConfig).toEqual({
      ProvisionedConcurrentExecutions: 3,
    });
    // Status left at 0: no alias.
    expect(
      warm(describedAs(chosen, 'GET /v1/payments/credit-transfers/{paymentId}/status:')),
    ).toBeUndefined();

    // API Gateway calls the aliases, so the warm instances are the ones that answer.
    const [tokenAuthorizer] = resourcesOf(chosen.template, 'AWS::ApiGateway::Authorizer').values();
    expect(JSON.stringify(tokenAuthorizer?.Properties.AuthorizerUri)).toContain(String(authorizerAlias));
    const integrations = [...resourcesOf(chosen.template, 'AWS::ApiGateway::Method').values()].map((method) =>
      JSON.stringify((method.Properties.Integration as { Uri?: unknown } | undefined)?.Uri ?? ''),
    );
    expect(integrations.some((uri) => uri.includes(String(initiationAlias)))).toBe(true);
    expect(getAttTargets(tokenAuthorizer?.Properties.AuthorizerUri)).not.toContain(authorizerId);
  });
});

describe('the AWS SDK context values', () => {
  const configOf = (context: Record<string, string>) => stageConfig((name) => context[name]);

  it('are off by default', () => {
    const config = configOf({});
    expect(config.awsEndpoints).toEqual({ fips: false, dualStack: false });
    expect(config.provisionedConcurrency).toEqual({ authorizer: 0, initiation: 0, status: 0 });
  });

  it('refuse what is not true/false or a whole number, naming the value', () => {
    expect(() => configOf({ fipsEndpoints: 'yes' })).toThrow('Context fipsEndpoints must be true or false');
    expect(() => configOf({ provisionedConcurrencyStatus: '-1' })).toThrow(
      'Context provisionedConcurrencyStatus must be a whole number',
    );
  });
});
