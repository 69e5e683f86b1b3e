import { describe, expect, it } from 'vitest';
import { type ApiGatewaySender, UsagePlanTenantRateLimits } from '#adapters/access/usage-plans';

/**
 * `list()` on a stage: the tenants with a plan of their own on this stage only. API Gateway's
 * GetUsagePlans answers every plan of the account and region, so plans of another stage, or of
 * another API, are there too, and the answer comes in pages.
 */
interface Plan {
  id: string;
  name: string;
  apiStages: { apiId: string; stage: string }[];
  throttle?: { rateLimit: number; burstLimit: number };
  tags?: Record<string, string>;
}

/** GetUsagePlan and GetUsagePlans over these plans, `pageSize` at a time. */
const apiGatewayWith = (plans: Plan[], pageSize: number): ApiGatewaySender & { pages: number } => {
  const fake = {
    pages: 0,
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's commands, by class name and input
    async send(command: any): Promise<any> {
      const input = command.input;
      switch (command.constructor.name) {
        case 'GetUsagePlanCommand':
          return plans.find((plan) => plan.id === input.usagePlanId);
        case 'GetUsagePlansCommand': {
          fake.pages++;
          const from = Number(input.position ?? 0);
          const next = from + pageSize;
          return { items: plans.slice(from, next), ...(next < plans.length && { position: String(next) }) };
        }
        default:
          throw new Error(`the fake does not know ${command.constructor.name}`);
      }
    },
  };
  return fake;
};

const plan = (id: string, stage: string, tenant?: string, rate = 5, apiId = 'api123'): Plan => ({
  id,
  name: `CreditTransfers-${stage}-${tenant ?? 'tenants'}`,
  apiStages: [{ apiId, stage }],
  throttle: { rateLimit: rate, burstLimit: 2 * rate },
  ...(tenant !== undefined && { tags: { tenant } }),
});

describe("a stage's per-tenant limits, listed", () => {
  it("are this stage's tenant plans only: not another stage's, another API's, the default plan or an untagged plan", async () => {
    const plans = [
      // The default plan is never a tenant's, even tagged as one.
      { ...plan('dev-default', 'dev'), tags: { tenant: 'everyone' } },
      plan('prod-default', 'prod'),
      plan('dev-zeta', 'dev', 'zeta', 1),
      plan('dev-globex', 'dev', 'globex', 7),
      plan('prod-acme', 'prod', 'acme', 9),
      plan('dev-untagged', 'dev', undefined, 3),
      plan('other-api-initech', 'dev', 'initech', 4, 'api999'),
      // A plan over two stages holds its tenant's limit on each.
      {
        ...plan('both-beta', 'prod', 'beta', 6),
        apiStages: [
          { apiId: 'api123', stage: 'prod' },
          { apiId: 'api123', stage: 'dev' },
        ],
      },
      plan('dev-acme', 'dev', 'acme', 2),
    ];
    const apiGateway = apiGatewayWith(plans, 2);
    const listed = await new UsagePlanTenantRateLimits(apiGateway, 'dev-default').list();
    expect(listed).toEqual([
      { tenant: 'acme', limit: { ratePerSecond: 2, burst: 4 } },
      { tenant: 'beta', limit: { ratePerSecond: 6, burst: 12 } },
      { tenant: 'globex', limit: { ratePerSecond: 7, burst: 14 } },
      { tenant: 'zeta', limit: { ratePerSecond: 1, burst: 2 } },
    ]);
    // Every page read: the last plan is on the fifth.
    expect(apiGateway.pages).toBe(5);

    expect(await new UsagePlanTenantRateLimits(apiGatewayWith(plans, 500), 'prod-default').list()).toEqual([
      { tenant: 'acme', limit: { ratePerSecond: 9, burst: 18 } },
      { tenant: 'beta', limit: { ratePerSecond: 6, burst: 12 } },
    ]);
  });
});
