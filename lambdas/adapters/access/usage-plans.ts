import {
  type ApiKey,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlansCommand,
  UpdateUsagePlanCommand,
  type UsagePlan,
} from '@aws-sdk/client-api-gateway';
import type { TenantRateLimits } from '#domain/access/ports';
import { type TenantRateLimit, usageIdentifierKey } from '#domain/access/tenant-rate-limit';

/** What this adapter needs of an APIGatewayClient (a fake in unit tests). */
export interface ApiGatewaySender {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's commands are typed by their classes
  send(command: any): Promise<any>;
}

/**
 * Per-tenant limits on a deployed stage, kept where API Gateway applies them. Each tenant has one
 * API key (value: usageIdentifierKey(), the one the authorizer names), in exactly one usage plan
 * of the stage: the stack's default plan, or a plan of its own (tagged with the tenant) holding
 * its limit. API Gateway lets a key be in one plan per stage, so a key moves between plans.
 */
export class UsagePlanTenantRateLimits implements TenantRateLimits {
  private stageOfDefault?: Promise<{ apiId: string; stage: string; name: string }>;

  constructor(
    private readonly apiGateway: ApiGatewaySender,
    /** The stack output DefaultUsagePlanId. */
    private readonly defaultPlanId: string,
  ) {}

  async get(tenant: string): Promise<TenantRateLimit | undefined> {
    const key = await this.keyOf(tenant);
    if (key === undefined) return undefined;
    const plan = await this.planHolding(key);
    return plan === undefined || plan.id === this.defaultPlanId ? undefined : limitOf(plan);
  }

  async set(tenant: string, limit: TenantRateLimit): Promise<void> {
    const key = await this.ensureKey(tenant);
    const plan = await this.planHolding(key);
    const throttle = { rateLimit: limit.ratePerSecond, burstLimit: limit.burst };
    if (plan !== undefined && plan.id !== this.defaultPlanId) {
      await this.apiGateway.send(
        new UpdateUsagePlanCommand({
          usagePlanId: plan.id,
          patchOperations: [
            { op: 'replace', path: '/throttle/rateLimit', value: String(throttle.rateLimit) },
            { op: 'replace', path: '/throttle/burstLimit', value: String(throttle.burstLimit) },
          ],
        }),
      );
      return;
    }
    const { apiId, stage, name } = await this.defaultStage();
    const own = (await this.apiGateway.send(
      new CreateUsagePlanCommand({
        name: `${name}-${tenant}`,
        description: `Tenant ${tenant}: a limit of its own (npm run clients -- set-limit)`,
        apiStages: [{ apiId, stage }],
        throttle,
        tags: { tenant },
      }),
    )) as UsagePlan;
    await this.move(key, plan?.id, own.id as string);
  }

  async clear(tenant: string): Promise<boolean> {
    const key = await this.keyOf(tenant);
    if (key === undefined) return false;
    const plan = await this.planHolding(key);
    if (plan === undefined || plan.id === this.defaultPlanId) return false;
    await this.move(key, plan.id, this.defaultPlanId);
    const { apiId, stage } = await this.defaultStage();
    // A plan is deleted only once no stage is in it.
    await this.apiGateway.send(
      new UpdateUsagePlanCommand({
        usagePlanId: plan.id,
        patchOperations: [{ op: 'remove', path: '/apiStages', value: `${apiId}:${stage}` }],
      }),
    );
    await this.apiGateway.send(new DeleteUsagePlanCommand({ usagePlanId: plan.id }));
    return true;
  }

  async list(): Promise<{ tenant: string; limit: TenantRateLimit }[]> {
    const { apiId, stage } = await this.defaultStage();
    const plans: UsagePlan[] = [];
    let position: string | undefined;
    do {
      const page = await this.apiGateway.send(new GetUsagePlansCommand({ limit: 500, position }));
      plans.push(...((page.items ?? []) as UsagePlan[]));
      position = page.position;
    } while (position !== undefined);
    return plans
      .filter((plan) => plan.id !== this.defaultPlanId && plan.tags?.tenant !== undefined)
      .filter((plan) => plan.apiStages?.some((s) => s.apiId === apiId && s.stage === stage))
      .map((plan) => ({ tenant: plan.tags?.tenant as string, limit: limitOf(plan) }))
      .sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
  }

  async admit(tenant: string): Promise<void> {
    const key = await this.ensureKey(tenant);
    if ((await this.planHolding(key)) === undefined) await this.move(key, undefined, this.defaultPlanId);
  }

  /** From one plan to another; put back where it was if the second step fails. */
  private async move(key: ApiKey, from: string | undefined, to: string): Promise<void> {
    // A key is in one plan per stage: it leaves the first before it joins the second, so calls
    // in between (one round trip) are refused with 403 and may be retried.
    if (from !== undefined) {
      await this.apiGateway.send(new DeleteUsagePlanKeyCommand({ usagePlanId: from, keyId: key.id }));
    }
    try {
      await this.apiGateway.send(
        new CreateUsagePlanKeyCommand({ usagePlanId: to, keyId: key.id, keyType: 'API_KEY' }),
      );
    } catch (error) {
      if (from !== undefined) {
        await this.apiGateway.send(
          new CreateUsagePlanKeyCommand({ usagePlanId: from, keyId: key.id, keyType: 'API_KEY' }),
        );
      }
      throw error;
    }
  }

  private defaultStage(): Promise<{ apiId: string; stage: string; name: string }> {
    this.stageOfDefault ??= (async () => {
      const plan = (await this.apiGateway.send(
        new GetUsagePlanCommand({ usagePlanId: this.defaultPlanId }),
      )) as UsagePlan;
      const [apiStage, ...others] = plan.apiStages ?? [];
      if (apiStage?.apiId === undefined || apiStage.stage === undefined || others.length > 0) {
        throw new Error(`usage plan ${this.defaultPlanId} is not the default plan of one API stage`);
      }
      return { apiId: apiStage.apiId, stage: apiStage.stage, name: plan.name ?? this.defaultPlanId };
    })();
    return this.stageOfDefault;
  }

  private async keyName(tenant: string): Promise<string> {
    const { apiId, stage } = await this.defaultStage();
    return `tenant-${tenant}-${apiId}-${stage}`;
  }

  private async keyOf(tenant: string): Promise<ApiKey | undefined> {
    const name = await this.keyName(tenant);
    let position: string | undefined;
    do {
      const page = await this.apiGateway.send(
        new GetApiKeysCommand({ nameQuery: name, limit: 500, position }),
      );
      const found = ((page.items ?? []) as ApiKey[]).find((key) => key.name === name);
      if (found !== undefined) return found;
      position = page.position;
    } while (position !== undefined);
    return undefined;
  }

  private async ensureKey(tenant: string): Promise<ApiKey> {
    const existing = await this.keyOf(tenant);
    if (existing !== undefined) return existing;
    const { apiId, stage } = await this.defaultStage();
    return (await this.apiGateway.send(
      new CreateApiKeyCommand({
        name: await this.keyName(tenant),
        description: `Tenant ${tenant}: named by the authorizer (usageIdentifierKey), never sent by clients`,
        enabled: true,
        value: usageIdentifierKey(apiId, stage, tenant),
        tags: { tenant },
      }),
    )) as ApiKey;
  }

  /** The plan of this stage the key is in, if any. */
  private async planHolding(key: ApiKey): Promise<UsagePlan | undefined> {
    const { apiId, stage } = await this.defaultStage();
    const page = await this.apiGateway.send(new GetUsagePlansCommand({ keyId: key.id, limit: 500 }));
    return ((page.items ?? []) as UsagePlan[]).find((plan) =>
      plan.apiStages?.some((s) => s.apiId === apiId && s.stage === stage),
    );
  }
}

const limitOf = (plan: UsagePlan): TenantRateLimit => ({
  ratePerSecond: plan.throttle?.rateLimit ?? 0,
  burst: plan.throttle?.burstLimit ?? 0,
});
