import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '#routes';
import { readLifecycleDefinition, substitutionOf, WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { PRODUCTION_CONCURRENCY_INPUTS } from '../../lib/concurrency.ts';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { PAGED_KEY_CALLS, RECONCILER_FAILING_PERIODS } from '../../lib/constructs/monitoring.ts';
import { CONNECTOR_CALLS_PER_INVOCATION, TABLE_MARGIN_MS } from '../../lib/function-bindings.ts';
import { PRODUCTION_RESERVED_CONCURRENCY, reservedConcurrencyTotal } from '../../lib/operations-config.ts';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesized } from './synth.ts';
import {
  getAttTargets,
  type Resource,
  refOf,
  resourcesOf,
  statementsOfFunction,
} from './template-queries.ts';

/**
 * The go-live review of `prod`: what stops money pages, the keys' policies change only through
 * the deployment and every change pages, and the stage is pinned to its account, region and
 * domain, its connector secret readable under the bank's own key.
 */
const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const KEY_ADMIN_ROLE = `arn:aws:iam::${ACCOUNT}:role/payments-key-admin`;
const SECRET_KEY_ARN = `arn:aws:kms:${REGION}:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;
const PROD = {
  stage: 'prod',
  account: ACCOUNT,
  region: REGION,
  keyAdminRoleArn: KEY_ADMIN_ROLE,
  connectorUrl: 'https://connector.clearing.example',
  connectorSecretArn: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:connector-hmac-AbCdEf`,
  connectorSecretKeyArn: SECRET_KEY_ARN,
  alarmEmail: 'payments-oncall@bank.example',
  domainName: 'payments.bank.example',
  certificateArn: `arn:aws:acm:${REGION}:${ACCOUNT}:certificate/0f1e2d3c`,
};

interface PolicyStatement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Principal?: unknown;
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
const actionsOf = (statement: PolicyStatement): string[] => [statement.Action].flat();

let prod: Synthesized;
beforeAll(async () => {
  [prod] = await synthesized(PROD);
}, SYNTH_TIMEOUT_MS);

const alarm = (name: string): Resource => {
  const found = [...resourcesOf(prod.template, 'AWS::CloudWatch::Alarm')].filter(([id]) =>
    new RegExp(`^Monitoring${name}[0-9A-F]{8}$`).test(id),
  );
  expect(found, name).toHaveLength(1);
  return (found[0] as [string, Resource])[1];
};
const topicId = (prefix: string): string => {
  const [id] = [...resourcesOf(prod.template, 'AWS::SNS::Topic').keys()].filter((t) => t.startsWith(prefix));
  expect(id, prefix).toBeDefined();
  return id as string;
};
const pageTopic = () => topicId('MonitoringAlarmTopic');
const notified = (resource: Resource): (string | undefined)[] =>
  ((resource.Properties.AlarmActions ?? []) as unknown[]).map(refOf);
const functionNamed = (prefix: string): string => {
  const [id] = [...resourcesOf(prod.template, 'AWS::Lambda::Function')].find(([fnId]) =>
    fnId.startsWith(prefix),
  ) ?? [undefined];
  expect(id, prefix).toBeDefined();
  return id as string;
};

describe('what stops money pages', () => {
  it('pages when the reconciler fails in each of several schedule periods in a row', () => {
    const failing = alarm('ReconcilerFailing');
    expect(notified(failing)).toEqual([pageTopic()]);
    expect(failing.Properties).toMatchObject({
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: RECONCILER_FAILING_PERIODS,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(RECONCILER_FAILING_PERIODS).toBeGreaterThan(1);
    const [dimension] = failing.Properties.Dimensions as { Value: unknown }[];
    expect(refOf(dimension?.Value)).toBe(functionNamed('LifecycleReconcilerFunction'));
    // One failed run stays a ticket.
    expect(notified(alarm('ReconcilerErrors'))).toEqual([topicId('MonitoringTicketTopic')]);
  });

  it('treats a missing stuck-transfer count as breaching: a reconciler that does not count is no all-clear', () => {
    const stuck = alarm('TransfersStuck');
    expect(stuck.Properties.TreatMissingData).toBe('breaching');
    expect(notified(stuck)).toEqual([pageTopic()]);
  });

  it('pages on a forged status event', () => {
    expect(notified(alarm('StatusEventForged'))).toEqual([pageTopic()]);
  });

  it('pages on ScheduleKeyDeletion, DisableKey and PutKeyPolicy of every key of the stage, through CloudTrail', () => {
    const rules = [...resourcesOf(prod.template, 'AWS::Events::Rule')].filter(([id]) =>
      id.startsWith('MonitoringKeyChanges'),
    );
    expect(rules).toHaveLength(1);
    const [ruleId, rule] = rules[0] as [string, Resource];
    // On the account's default bus, where CloudTrail's events arrive.
    expect(rule.Properties.EventBusName).toBeUndefined();
    const pattern = rule.Properties.EventPattern as {
      source: string[];
      'detail-type': string[];
      detail: { eventSource: string[]; eventName: string[]; resources: { ARN: unknown[] } };
    };
    expect(pattern.source).toEqual(['aws.kms']);
    expect(pattern['detail-type']).toEqual(['AWS API Call via CloudTrail']);
    expect(pattern.detail.eventSource).toEqual(['kms.amazonaws.com']);
    expect(new Set(pattern.detail.eventName)).toEqual(
      new Set(['ScheduleKeyDeletion', 'DisableKey', 'PutKeyPolicy']),
    );
    expect([...PAGED_KEY_CALLS]).toHaveLength(3);
    const watched = new Set(getAttTargets(pattern.detail.resources.ARN));
    const keys = [...resourcesOf(prod.template, 'AWS::KMS::Key').keys()];
    expect(keys.length).toBeGreaterThanOrEqual(5);
    expect(watched).toEqual(new Set(keys));
    const signing = keys.filter((id) => id.startsWith('TokenSigningKeys'));
    const table = keys.filter((id) => id.startsWith('CreditTransfersKey'));
    const webhook = keys.filter((id) => id.startsWith('WebhookSecretKey'));
    for (const kind of [signing, table, webhook]) expect(kind.length).toBeGreaterThan(0);

    const targets = rule.Properties.Targets as { Arn: unknown }[];
    expect(targets.map((t) => refOf(t.Arn))).toEqual([pageTopic()]);
    // The paging topic takes publications from this rule only, and its key lets EventBridge use it.
    const topicPolicy = [...resourcesOf(prod.template, 'AWS::SNS::TopicPolicy').values()].find((p) =>
      (p.Properties.Topics as unknown[]).some((t) => refOf(t) === pageTopic()),
    );
    const fromEvents = (
      (topicPolicy?.Properties.PolicyDocument as { Statement: PolicyStatement[] } | undefined)?.Statement ??
      []
    ).filter((s) => JSON.stringify(s.Principal).includes('events.amazonaws.com'));
    expect(fromEvents).toHaveLength(1);
    expect(getAttTargets(fromEvents[0]?.Condition?.ArnEquals?.['aws:SourceArn'])).toEqual([ruleId]);
    const topic = resourcesOf(prod.template, 'AWS::SNS::Topic').get(pageTopic()) as Resource;
    const [topicKeyId] = getAttTargets(topic.Properties.KmsMasterKeyId);
    const topicKey = resourcesOf(prod.template, 'AWS::KMS::Key').get(topicKeyId as string) as Resource;
    const keyStatements = (topicKey.Properties.KeyPolicy as { Statement: PolicyStatement[] }).Statement;
    const eventsUse = keyStatements.find((s) => JSON.stringify(s.Principal).includes('events.amazonaws.com'));
    expect(actionsOf(eventsUse as PolicyStatement)).toEqual(
      expect.arrayContaining(['kms:Decrypt', 'kms:GenerateDataKey*']),
    );
    expect(eventsUse?.Condition?.StringEquals?.['aws:SourceAccount']).toBeDefined();
  });

  it('pages when authenticated calls are answered 403 (a tenant in no usage plan), counted from the access log', () => {
    const filters = [...resourcesOf(prod.template, 'AWS::Logs::MetricFilter').values()];
    const accessLogs = [...resourcesOf(prod.template, 'AWS::ApiGateway::Stage').values()].flatMap(
      (stage) =>
        JSON.stringify(
          (stage.Properties.AccessLogSetting as { DestinationArn?: unknown } | undefined)?.DestinationArn,
        )
          .match(/"Ref":"(ApiAccessLogs[0-9A-F]{8})"/)
          ?.slice(1) ?? [],
    );
    expect(accessLogs).toHaveLength(1);
    const byName = new Map(
      filters.map((f) => {
        const [transformation] = f.Properties.MetricTransformations as {
          MetricName: string;
          MetricNamespace: string;
          Dimensions?: { Key: string; Value: string }[];
        }[];
        return [transformation?.MetricName, { filter: f, transformation }];
      }),
    );
    const calls = byName.get('AuthenticatedCalls');
    const forbidden = byName.get('AuthenticatedCallsForbidden');
    for (const found of [calls, forbidden]) {
      expect(refOf(found?.filter.Properties.LogGroupName)).toBe(accessLogs[0]);
      expect(found?.transformation?.MetricNamespace).toBe('CreditTransfers');
      expect(found?.transformation?.Dimensions).toEqual([{ Key: 'stage', Value: '$.stage' }]);
      expect(String(found?.filter.Properties.FilterPattern)).toContain('$.clientId != "-"');
    }
    expect(String(forbidden?.filter.Properties.FilterPattern)).toContain('($.status = "403")');
    expect(String(calls?.filter.Properties.FilterPattern)).not.toContain('$.status');
    // The access log names the stage the metrics are dimensioned by.
    const [stage] = [...resourcesOf(prod.template, 'AWS::ApiGateway::Stage').values()];
    expect(
      JSON.parse(String((stage?.Properties.AccessLogSetting as { Format?: string } | undefined)?.Format))
        .stage,
    ).toBe('$context.stage');

    const rate = alarm('AuthenticatedForbiddenRate');
    expect(notified(rate)).toEqual([pageTopic()]);
    const metrics = rate.Properties.Metrics as {
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Dimensions: { Name: string; Value: string }[] } };
    }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toMatch(/100 \* forbidden \/ calls/);
    const stats = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
    expect(new Set(stats.map((m) => m.MetricName))).toEqual(
      new Set(['AuthenticatedCalls', 'AuthenticatedCallsForbidden']),
    );
    for (const m of stats) expect(m.Dimensions).toEqual([{ Name: 'stage', Value: 'prod' }]);
  });

  it('lists each of them as a page in the runbook', () => {
    const runbook = readFileSync(join(PROJECT_ROOT, 'docs/operations.md'), 'utf8');
    for (const name of [
      'ReconcilerFailing',
      'TransfersStuck',
      'StatusEventForged',
      'KeyChanges',
      'AuthenticatedForbiddenRate',
    ]) {
      expect(runbook, name).toMatch(new RegExp(`^\\| \`${name}\` \\| page \\|`, 'm'));
    }
  });
});

describe('key policies change only through the deployment', () => {
  it('lets the key administrator disable or delete a key, never put its policy', () => {
    const keys = [...resourcesOf(prod.template, 'AWS::KMS::Key')];
    expect(keys.length).toBeGreaterThanOrEqual(5);
    for (const [id, key] of keys) {
      const statements = (key.Properties.KeyPolicy as { Statement: PolicyStatement[] }).Statement;
      const ofAdmin = statements.filter(
        (s) => JSON.stringify(s.Principal) === JSON.stringify({ AWS: KEY_ADMIN_ROLE }),
      );
      const allowed = ofAdmin.filter((s) => s.Effect === 'Allow').flatMap(actionsOf);
      expect(allowed, id).toEqual(expect.arrayContaining(['kms:DisableKey', 'kms:ScheduleKeyDeletion']));
      expect(
        allowed.filter((a) => a === 'kms:PutKeyPolicy' || a === 'kms:*' || a === 'kms:Put*'),
        id,
      ).toEqual([]);
      const denied = ofAdmin
        .filter((s) => s.Effect === 'Deny' && s.Condition === undefined)
        .flatMap(actionsOf);
      expect(denied, id).toContain('kms:PutKeyPolicy');
      // The deployment still puts the next policy (KMS's lockout safety check needs someone who may).
      const deployment = statements.find((s) => s.Sid === 'DeploymentManagesKey');
      expect(actionsOf(deployment as PolicyStatement), id).toContain('kms:PutKeyPolicy');
    }
  });
});

describe('prod pinned to its account, region and domain', () => {
  it('serves the API only on its custom domain, and names its region in the template', () => {
    const [api] = [...resourcesOf(prod.template, 'AWS::ApiGateway::RestApi').values()];
    expect(api?.Properties.DisableExecuteApiEndpoint).toBe(true);
    const outputs = prod.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.Issuer?.Value).toBe('https://payments.bank.example');
    // The stack's env: ARNs it formats carry the pinned region and account, not a pseudo parameter.
    const alarmTopicPolicy = JSON.stringify(
      [...resourcesOf(prod.template, 'AWS::SNS::TopicPolicy').values()][0]?.Properties,
    );
    expect(alarmTopicPolicy).toContain(`arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:*`);
  });

  it('lets the functions that read the connector secret decrypt it under its own key, through Secrets Manager only', () => {
    const functions = [...resourcesOf(prod.template, 'AWS::Lambda::Function')];
    const readers = functions.filter(
      ([, fn]) =>
        (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
          ?.CONNECTOR_SECRET_ARN !== undefined,
    );
    expect(readers.length).toBeGreaterThanOrEqual(4);
    for (const [id] of functions) {
      const decrypts = statementsOfFunction(prod.template, id).filter(
        (s) => s.Effect === 'Allow' && JSON.stringify(s.Resource) === JSON.stringify(SECRET_KEY_ARN),
      ) as PolicyStatement[];
      if (readers.some(([reader]) => reader === id)) {
        expect(decrypts.flatMap(actionsOf), id).toEqual(['kms:Decrypt']);
        expect(JSON.stringify(decrypts[0]?.Condition?.StringEquals?.['kms:ViaService']), id).toContain(
          'secretsmanager.',
        );
      } else {
        expect(decrypts, id).toEqual([]);
      }
    }
  });

  it('reserves the concurrency the preflight checks the quota for', () => {
    const total = [...resourcesOf(prod.template, 'AWS::Lambda::Function').values()].reduce(
      (sum, fn) => sum + Number(fn.Properties.ReservedConcurrentExecutions ?? 0),
      0,
    );
    expect(total).toBeGreaterThan(0);
    expect(reservedConcurrencyTotal(PRODUCTION_RESERVED_CONCURRENCY)).toBe(total);
  });

  it('has no unacknowledged cdk-nag or Control Tower finding', () => {
    expect(prod.nagFindings).toEqual([]);
    expect(prod.guardFindings).toEqual([]);
  });
});

describe('connector deadlines inside the function timeouts', () => {
  it("ends every connector call of a task before the task's function times out, the table's time kept", () => {
    const functions = [...resourcesOf(prod.template, 'AWS::Lambda::Function').values()];
    let checked = 0;
    for (const [key, { description }] of Object.entries(WORKFLOW_FUNCTIONS)) {
      const calls = CONNECTOR_CALLS_PER_INVOCATION[key as keyof typeof WORKFLOW_FUNCTIONS];
      const fn = functions.find((f) => String(f.Properties.Description).startsWith(description));
      const variables =
        (fn?.Properties.Environment as { Variables?: Record<string, string> } | undefined)?.Variables ?? {};
      if (variables.CONNECTOR_URL === undefined) {
        expect(calls, key).toBe(0);
        continue;
      }
      expect(calls, key).toBeGreaterThan(0);
      const deadline = Number(variables.CONNECTOR_DEADLINE_MS);
      expect(deadline, key).toBeGreaterThan(Number(variables.CONNECTOR_TIMEOUT_MS ?? 2500));
      expect(calls * deadline + TABLE_MARGIN_MS, key).toBeLessThanOrEqual(
        Number(fn?.Properties.Timeout) * 1000,
      );
      checked += 1;
    }
    expect(checked).toBe(3);
  });
});

describe("WAF and a tenant's plan", () => {
  it("lets one tenant at its default plan's rate through WAF from a single address", () => {
    const [plan] = [...resourcesOf(prod.template, 'AWS::ApiGateway::UsagePlan').values()];
    const rate = (plan?.Properties.Throttle as { RateLimit: number } | undefined)?.RateLimit;
    expect(rate).toBe(25);
    const [acl] = [...resourcesOf(prod.template, 'AWS::WAFv2::WebACL').values()];
    const rules = acl?.Properties.Rules as {
      Name: string;
      Statement: { RateBasedStatement?: { Limit: number } };
    }[];
    const apiRate = rules.find((r) => r.Name === 'api-rate')?.Statement.RateBasedStatement?.Limit;
    // WAF counts per address over five minutes.
    expect(apiRate).toBe((rate as number) * 300);
  });
});

describe("the concurrency formula's inputs, as the stage has them", () => {
  it('takes the API burst and rate from the stage, and the public burst from every public method', () => {
    const [stage] = [...resourcesOf(prod.template, 'AWS::ApiGateway::Stage').values()];
    const settings = stage?.Properties.MethodSettings as {
      HttpMethod: string;
      ResourcePath: string;
      ThrottlingBurstLimit?: number;
      ThrottlingRateLimit?: number;
    }[];
    const stageWide = settings.find((m) => m.ResourcePath === '/*' && m.HttpMethod === '*');
    expect(stageWide?.ThrottlingBurstLimit).toBe(PRODUCTION_CONCURRENCY_INPUTS.apiBurst);
    expect(stageWide?.ThrottlingRateLimit).toBe(PRODUCTION_CONCURRENCY_INPUTS.apiRatePerSecond);
    const publicRoutes = ROUTES.filter((route) => route.scope === undefined);
    expect(publicRoutes.length).toBeGreaterThan(3);
    for (const route of publicRoutes) {
      const own = settings.find(
        (m) => m.HttpMethod === route.method && m.ResourcePath === `/${route.path.replaceAll('/', '~1')}`,
      );
      expect(own?.ThrottlingBurstLimit, route.path).toBeLessThanOrEqual(
        PRODUCTION_CONCURRENCY_INPUTS.publicBurst,
      );
    }
  });

  it("drains a largest batch well inside the fast path's time limit", () => {
    const fastPath = readLifecycleDefinition(PROJECT_ROOT) as { TimeoutSeconds?: number };
    expect(PRODUCTION_CONCURRENCY_INPUTS.batchDrainSeconds).toBeLessThanOrEqual(
      Number(fastPath.TimeoutSeconds) / 2,
    );
  });
});

describe("the fast path's retries inside its time limit", () => {
  interface Retrier {
    ErrorEquals: string[];
    IntervalSeconds?: number;
    MaxAttempts?: number;
    BackoffRate?: number;
    MaxDelaySeconds?: number;
  }
  /** The longest a retrier waits in all: every attempt's delay at its full (un-jittered) value. */
  const delays = (r: Retrier): number =>
    Array.from({ length: r.MaxAttempts ?? 3 }, (_, k) =>
      Math.min(
        (r.IntervalSeconds ?? 1) * (r.BackoffRate ?? 2) ** k,
        r.MaxDelaySeconds ?? Number.POSITIVE_INFINITY,
      ),
    ).reduce((sum, delay) => sum + delay, 0);
  /** Errors that end an attempt only when it runs out of time; throttles and service errors end it at once. */
  const slow = (r: Retrier): boolean =>
    r.ErrorEquals.some((e) => e === 'States.TaskFailed' || e === 'States.Timeout' || e === 'States.ALL');

  it("keeps every Task state's worst case of retries within the Express machine's timeout", () => {
    const fastPath = readLifecycleDefinition(PROJECT_ROOT) as unknown as {
      TimeoutSeconds: number;
      States: Record<string, { Type: string; Resource?: string; TimeoutSeconds?: number; Retry?: Retrier[] }>;
    };
    // Express machines stop at 5 minutes, whatever the definition asks.
    expect(fastPath.TimeoutSeconds).toBeLessThanOrEqual(300);
    const functions = [...resourcesOf(prod.template, 'AWS::Lambda::Function').values()];
    let checked = 0;
    for (const [name, state] of Object.entries(fastPath.States)) {
      if (state.Type !== 'Task') continue;
      // An attempt lasts at most the state's timeout, or its function's where that is shorter.
      const substitution = substitutionOf(state.Resource);
      const task = Object.values(WORKFLOW_FUNCTIONS).find((fn) => fn.substitution === substitution);
      const fn = functions.find(
        (f) => task !== undefined && String(f.Properties.Description).startsWith(task.description),
      );
      const attempt = Math.min(
        state.TimeoutSeconds ?? 60,
        fn ? Number(fn.Properties.Timeout) : Number.POSITIVE_INFINITY,
      );
      const retriers = state.Retry ?? [];
      const slowAttempts = 1 + retriers.filter(slow).reduce((sum, r) => sum + (r.MaxAttempts ?? 3), 0);
      const worst = retriers.reduce((sum, r) => sum + delays(r), 0) + slowAttempts * attempt;
      expect(worst, `${name}: ${worst} s`).toBeLessThanOrEqual(fastPath.TimeoutSeconds);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(4);
  });

  it('states the throttle retries in the runbook as the definition has them', () => {
    const fastPath = readLifecycleDefinition(PROJECT_ROOT) as unknown as {
      States: Record<string, { Retry?: Retrier[] }>;
    };
    const throttle = Object.values(fastPath.States)
      .flatMap((state) => state.Retry ?? [])
      .filter((r) => r.ErrorEquals.includes('Lambda.TooManyRequestsException'));
    expect(throttle.length).toBeGreaterThan(0);
    const runbook = readFileSync(join(PROJECT_ROOT, 'docs/operations.md'), 'utf8').replace(/\s+/g, ' ');
    for (const r of throttle) {
      expect(runbook).toContain(
        `${r.MaxAttempts} attempts, backoff from ${r.IntervalSeconds} s to ${r.MaxDelaySeconds} s, ${Math.round(delays(r))} s at most`,
      );
    }
    expect(runbook).not.toMatch(/about 7 minutes/);
  });
});
