import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileTenantRateLimits, watchedTenantRateLimits } from '#adapters/access/tenant-rate-limit-file';
import { type ApiGatewaySender, UsagePlanTenantRateLimits } from '#adapters/access/usage-plans';
import { usageIdentifierKey } from '#domain/access/tenant-rate-limit';
import { ClientCreateUsageError, clientsArguments } from '../../../scripts/client-create.ts';
import { clientsProgram, useApiGateway } from '../../../scripts/clients.ts';

/**
 * `npm run clients -- set-limit|show-limit|clear-limit`: locally a file in the data folder the
 * gateway reads; on a stage API keys and usage plans, here on an in-memory API Gateway that keeps
 * its rule of one plan per key and stage.
 */
interface Plan {
  id: string;
  name: string;
  apiStages: { apiId: string; stage: string }[];
  throttle?: { rateLimit: number; burstLimit: number };
  tags?: Record<string, string>;
}

class FakeApiGateway implements ApiGatewaySender {
  readonly keys: { id: string; name: string; value: string; tags?: Record<string, string> }[] = [];
  readonly plans = new Map<string, Plan>();
  readonly planKeys = new Map<string, Set<string>>();
  readonly calls: string[] = [];
  private next = 1;

  constructor() {
    this.plans.set('default-plan', {
      id: 'default-plan',
      name: 'CreditTransfers-dev-tenants',
      apiStages: [{ apiId: 'api123', stage: 'dev' }],
      throttle: { rateLimit: 25, burstLimit: 50 },
    });
    this.planKeys.set('default-plan', new Set());
  }

  // biome-ignore lint/suspicious/noExplicitAny: the SDK's commands, by class name and input
  async send(command: any): Promise<any> {
    const name: string = command.constructor.name;
    const input = command.input;
    this.calls.push(name);
    switch (name) {
      case 'GetUsagePlanCommand':
        return this.plans.get(input.usagePlanId);
      case 'GetUsagePlansCommand':
        return {
          items: [...this.plans.values()].filter(
            (plan) => input.keyId === undefined || this.planKeys.get(plan.id)?.has(input.keyId),
          ),
        };
      case 'GetApiKeysCommand':
        return { items: this.keys.filter((key) => key.name.startsWith(input.nameQuery ?? '')) };
      case 'CreateApiKeyCommand': {
        if (this.keys.some((key) => key.value === input.value)) throw new Error('ConflictException');
        const key = { id: `key-${this.next++}`, name: input.name, value: input.value, tags: input.tags };
        this.keys.push(key);
        return key;
      }
      case 'CreateUsagePlanCommand': {
        const plan: Plan = { id: `plan-${this.next++}`, ...input };
        this.plans.set(plan.id, plan);
        this.planKeys.set(plan.id, new Set());
        return plan;
      }
      case 'CreateUsagePlanKeyCommand': {
        const stages = this.plans.get(input.usagePlanId)?.apiStages ?? [];
        for (const [planId, keys] of this.planKeys) {
          const plan = this.plans.get(planId);
          const sharesStage = plan?.apiStages.some((s) =>
            stages.some((t) => t.apiId === s.apiId && t.stage === s.stage),
          );
          if (keys.has(input.keyId) && sharesStage) throw new Error('ConflictException: one plan per stage');
        }
        this.planKeys.get(input.usagePlanId)?.add(input.keyId);
        return {};
      }
      case 'DeleteUsagePlanKeyCommand':
        this.planKeys.get(input.usagePlanId)?.delete(input.keyId);
        return {};
      case 'UpdateUsagePlanCommand': {
        const plan = this.plans.get(input.usagePlanId) as Plan;
        for (const operation of input.patchOperations) {
          if (operation.path === '/throttle/rateLimit')
            plan.throttle = {
              ...(plan.throttle as Plan['throttle'] & object),
              rateLimit: Number(operation.value),
            };
          else if (operation.path === '/throttle/burstLimit')
            plan.throttle = {
              ...(plan.throttle as Plan['throttle'] & object),
              burstLimit: Number(operation.value),
            };
          else if (operation.op === 'remove' && operation.path === '/apiStages') plan.apiStages = [];
        }
        return plan;
      }
      case 'DeleteUsagePlanCommand': {
        if ((this.plans.get(input.usagePlanId)?.apiStages.length ?? 0) > 0)
          throw new Error('BadRequestException: the plan has stages');
        this.plans.delete(input.usagePlanId);
        this.planKeys.delete(input.usagePlanId);
        return {};
      }
      default:
        throw new Error(`the fake does not know ${name}`);
    }
  }

  /** The plan the tenant's key is in. */
  planOf(tenant: string): Plan | undefined {
    const key = this.keys.find((k) => k.tags?.tenant === tenant);
    const planId = [...this.planKeys].find(([, keys]) => key !== undefined && keys.has(key.id))?.[0];
    return planId === undefined ? undefined : this.plans.get(planId);
  }
}

let fake: FakeApiGateway;
let dataDir: string;
let output: string[];

const run = async (...argv: string[]) => {
  const program = clientsProgram();
  program.exitOverride();
  for (const command of program.commands) command.exitOverride();
  await program.parseAsync(argv, { from: 'user' });
};
const onStage = ['--table', 'credit-transfers-dev', '--region', 'eu-west-1', '--usage-plan', 'default-plan'];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clients-limits-'));
  vi.stubEnv('DATA_DIR', dataDir);
  useApiGateway(() => fake);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(dataDir, { recursive: true, force: true });
});

beforeEach(() => {
  fake = new FakeApiGateway();
  output = [];
  vi.spyOn(console, 'log').mockImplementation((line: string) => {
    output.push(line);
  });
});

describe('clients set-limit on the local service', () => {
  it('keeps the limit in the data folder, where the gateway reads it, until cleared', async () => {
    await run('set-limit', '--tenant', 'acme', '--rate', '3');
    const file = JSON.parse(await readFile(join(dataDir, 'tenant-rate-limits.json'), 'utf8'));
    expect(file).toEqual({ tenants: { acme: { ratePerSecond: 3, burst: 6 } } });
    expect(output.join('\n')).toMatch(/acme: 3 requests per second, bursts of 6/);

    await run('set-limit', '--tenant', 'globex', '--rate', '5', '--burst', '7');
    const read = watchedTenantRateLimits(join(dataDir, 'tenant-rate-limits.json'));
    expect(Object.fromEntries(read())).toEqual({
      acme: { ratePerSecond: 3, burst: 6 },
      globex: { ratePerSecond: 5, burst: 7 },
    });

    await run('clear-limit', '--tenant', 'acme');
    expect(await new FileTenantRateLimits(join(dataDir, 'tenant-rate-limits.json')).list()).toEqual([
      { tenant: 'globex', limit: { ratePerSecond: 5, burst: 7 } },
    ]);
  });

  it('refuses a rate that is not a whole number from 1, and a tenant the table would refuse', async () => {
    await expect(run('set-limit', '--tenant', 'acme', '--rate', '0')).rejects.toThrow(/rate must be/);
    await expect(run('set-limit', '--tenant', 'acme', '--rate', '1.5')).rejects.toThrow(/whole number/);
    await expect(run('set-limit', '--tenant', 'a b', '--rate', '1')).rejects.toThrow(/--tenant/);
  });
});

describe('clients set-limit on a stage (API Gateway faked)', () => {
  it('moves the tenant from the default plan to a plan of its own, updates it, and moves it back', async () => {
    await run('set-limit', '--tenant', 'acme', '--rate', '4', ...onStage);
    const own = fake.planOf('acme');
    expect(own).toMatchObject({
      apiStages: [{ apiId: 'api123', stage: 'dev' }],
      throttle: { rateLimit: 4, burstLimit: 8 },
      tags: { tenant: 'acme' },
    });
    expect(own?.id).not.toBe('default-plan');
    // The key the authorizer names for acme on this stage.
    expect(fake.keys).toEqual([
      expect.objectContaining({ value: usageIdentifierKey('api123', 'dev', 'acme') }),
    ]);

    await run('set-limit', '--tenant', 'acme', '--rate', '9', '--burst', '10', ...onStage);
    expect(fake.planOf('acme')).toMatchObject({ id: own?.id, throttle: { rateLimit: 9, burstLimit: 10 } });
    await run('show-limit', ...onStage);
    expect(output.at(-1)).toMatch(/acme\s+9 requests per second, bursts of 10/);

    await run('clear-limit', '--tenant', 'acme', ...onStage);
    expect(fake.planOf('acme')?.id).toBe('default-plan');
    expect(fake.plans.has(own?.id as string)).toBe(false);
    await run('show-limit', '--tenant', 'acme', ...onStage);
    expect(output.at(-1)).toMatch(/acme: the default/);
  });

  it('admits a tenant into the default plan once, however often asked', async () => {
    const limits = new UsagePlanTenantRateLimits(fake, 'default-plan');
    await limits.admit('acme');
    await limits.admit('acme');
    expect(fake.planOf('acme')?.id).toBe('default-plan');
    expect(fake.keys).toHaveLength(1);
    // A tenant with its own plan stays in it.
    await limits.set('globex', { ratePerSecond: 2, burst: 4 });
    await limits.admit('globex');
    expect(fake.planOf('globex')?.throttle).toEqual({ rateLimit: 2, burstLimit: 4 });
  });

  it('needs --usage-plan on a stage, and refuses it locally', async () => {
    await expect(
      run('set-limit', '--tenant', 'acme', '--rate', '4', '--table', 't', '--region', 'eu-west-1'),
    ).rejects.toThrow(/--usage-plan is required/);
    await expect(run('show-limit', '--usage-plan', 'p')).rejects.toThrow(/apply only with --table/);
    // A client on a stage is made only with its tenant admitted: refused before any AWS call.
    await expect(
      run(
        'create',
        ...['--client-id', 'c', '--scope', 'transactions:read', '--tenant', 'acme'],
        ...['--table', 't', '--region', 'eu-west-1', '--event-bus', 'b'],
      ),
    ).rejects.toThrow(/--usage-plan is required/);
    expect(fake.calls).toEqual([]);
  });
});

describe("a tenant's first client on a stage", () => {
  // The table and the bus stood in for: what is asserted is the usage plan, on the fake gateway.
  const sts = mockClient(STSClient);
  const table = mockClient(DynamoDBDocumentClient);
  const bus = mockClient(EventBridgeClient);
  afterAll(() => {
    for (const mock of [sts, table, bus]) mock.restore();
  });
  beforeEach(() => {
    for (const mock of [sts, table, bus]) mock.reset();
    sts.on(GetCallerIdentityCommand).resolves({ Arn: 'arn:aws:iam::123456789012:user/ops' });
    table.onAnyCommand().resolves({});
    bus.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] });
  });

  it('admits the tenant to the default usage plan in the same command as client:create --aws', async () => {
    const argv = clientsArguments([
      ...['--client-id', 'globex-erp', '--scope', 'transactions:read', '--tenant', 'globex'],
      ...['--aws', '--table-name', 't', '--region', 'eu-west-1', '--event-bus', 'b'],
      ...['--usage-plan', 'default-plan'],
    ]);
    expect(argv).not.toBe('help');
    expect(fake.planOf('globex')).toBeUndefined();

    let gatewayCallsBeforeTable: string[] | undefined;
    table.onAnyCommand().callsFake(() => {
      gatewayCallsBeforeTable ??= [...fake.calls];
      return {};
    });
    await run(...(argv as string[]));

    expect(fake.planOf('globex')?.id).toBe('default-plan');
    expect(fake.keys).toEqual([
      expect.objectContaining({ value: usageIdentifierKey('api123', 'dev', 'globex') }),
    ]);
    // Admitted before the client is written: no client exists whose calls would all be refused.
    expect(gatewayCallsBeforeTable).toContain('CreateUsagePlanKeyCommand');
    expect(output.join('\n')).toMatch(/client globex-erp \(tenant globex/);
  });

  it('refuses client:create --aws without the usage plan, before any call', () => {
    expect(() =>
      clientsArguments([
        ...['--client-id', 'c', '--scope', 'transactions:read', '--tenant', 'acme'],
        ...['--aws', '--table-name', 't', '--event-bus', 'b'],
      ]),
    ).toThrow(ClientCreateUsageError);
    expect(() =>
      clientsArguments(['--client-id', 'c', '--scope', 's', '--tenant', 'acme', '--usage-plan', 'p']),
    ).toThrow(/apply only with --aws/);
    expect(fake.calls).toEqual([]);
  });
});
