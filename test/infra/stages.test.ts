import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '#routes';
import { RECONCILER_ENTRY, WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesize, synthesized } from './synth.ts';
import {
  allowedActions,
  getAttTargets,
  type Resource,
  refOf,
  resourcesOf,
  type Statement,
  statementsOfFunction,
} from './template-queries.ts';

/**
 * The stages as a platform engineer deploys them: `dev` with nothing but defaults, `prod` on the
 * connector rail with an alarm address, `prod` on the sandbox, and a stage with every option on.
 */
const CONNECTOR_URL = 'https://connector.clearing.example';
const ALARM_EMAIL = 'payments-oncall@bank.example';
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:connector-hmac-AbCdEf';

/** What every prod stage names (its account, its key administrator): synth fails without them. */
const PROD_PINNED = {
  account: '123456789012',
  keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
  region: 'eu-west-1',
  // These prod stages are rehearsals without a custom domain.
  noCustomDomain: 'true',
};

interface PolicyStatement extends Statement {
  Sid?: string;
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const functionsOf = (template: Template): Map<string, Resource> =>
  resourcesOf(template, 'AWS::Lambda::Function');
const environmentOf = (fn: Resource | undefined): Record<string, unknown> =>
  (fn?.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
const onlyOne = <T>(values: Iterable<T>, what: string): T => {
  const all = [...values];
  if (all.length !== 1) throw new Error(`Expected one ${what}, found ${all.length}`);
  return all[0] as T;
};

/** The function whose description a handler entry gave it (workflow functions, reconciler). */
const workflowFunction = (template: Template, entry: string): string => {
  const description =
    Object.values(WORKFLOW_FUNCTIONS).find((fn) => fn.entry === entry)?.description ?? 'Lifecycle: drives on';
  const [id] = [...functionsOf(template)].find(([, fn]) =>
    String(fn.Properties.Description ?? '').startsWith(description),
  ) ?? [undefined];
  if (id === undefined) throw new Error(`No function for ${entry}`);
  return id;
};
const routeFunction = (template: Template, method: string, path: string): string => {
  const [id] = [...functionsOf(template)].find(([, fn]) =>
    String(fn.Properties.Description ?? '').startsWith(`${method} ${path}:`),
  ) ?? [undefined];
  if (id === undefined) throw new Error(`No function for ${method} ${path}`);
  return id;
};
const authorizerFunction = (template: Template): string => {
  const authorizer = onlyOne(resourcesOf(template, 'AWS::ApiGateway::Authorizer').values(), 'authorizer');
  const [id] = getAttTargets(authorizer.Properties.AuthorizerUri).filter((target) =>
    functionsOf(template).has(target),
  );
  if (id === undefined) throw new Error('No authorizer function');
  return id;
};
const roleOf = (template: Template, functionId: string): string => {
  const [roleId] = getAttTargets(functionsOf(template).get(functionId)?.Properties.Role);
  if (roleId === undefined) throw new Error(`No role for ${functionId}`);
  return roleId;
};

/** The rail callers by their handler files: they, and only they, may read the connector secret. */
const RAIL_CALLER_ENTRIES = [
  WORKFLOW_FUNCTIONS.validateCheckAndSubmit.entry,
  WORKFLOW_FUNCTIONS.submitToClearing.entry,
  WORKFLOW_FUNCTIONS.pollClearing.entry,
  RECONCILER_ENTRY,
];

/** Every resource policy of the template: key policies, topic and queue policies. */
const resourcePolicies = (template: Template): [string, PolicyStatement[]][] => [
  ...[...resourcesOf(template, 'AWS::KMS::Key')].map(([id, key]): [string, PolicyStatement[]] => [
    id,
    (key.Properties.KeyPolicy as { Statement: PolicyStatement[] }).Statement,
  ]),
  ...[
    ...resourcesOf(template, 'AWS::SNS::TopicPolicy'),
    ...resourcesOf(template, 'AWS::SQS::QueuePolicy'),
  ].map(([id, policy]): [string, PolicyStatement[]] => [
    id,
    (policy.Properties.PolicyDocument as { Statement: PolicyStatement[] }).Statement,
  ]),
];

/** Does an IAM action pattern (with `*` and `?`) cover the action? */
const covers = (pattern: string, action: string): boolean =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'i',
  ).test(action);
const actionsOf = (statement: Statement): string[] => [statement.Action].flat();

/** Metric names an alarm watches, with their dimensions, whether single metric or math. */
interface WatchedMetric {
  namespace?: string;
  name?: string;
  dimensions: Record<string, unknown>;
  statistic?: string;
}
const watchedMetrics = (alarm: Resource): WatchedMetric[] => {
  const p = alarm.Properties;
  const dimensionsOf = (dimensions: unknown): Record<string, unknown> =>
    Object.fromEntries(
      ((dimensions ?? []) as { Name: string; Value: unknown }[]).map((d) => [d.Name, d.Value]),
    );
  if (p.MetricName !== undefined) {
    return [
      {
        namespace: p.Namespace as string,
        name: p.MetricName as string,
        dimensions: dimensionsOf(p.Dimensions),
        statistic: (p.ExtendedStatistic ?? p.Statistic) as string,
      },
    ];
  }
  return ((p.Metrics ?? []) as { MetricStat?: { Metric: Record<string, unknown>; Stat: string } }[])
    .filter((m) => m.MetricStat !== undefined)
    .map((m) => ({
      namespace: m.MetricStat?.Metric.Namespace as string,
      name: m.MetricStat?.Metric.MetricName as string,
      dimensions: dimensionsOf(m.MetricStat?.Metric.Dimensions),
      statistic: m.MetricStat?.Stat,
    }));
};
const alarmsWatching = (template: Template, test: (metric: WatchedMetric) => boolean): Resource[] =>
  [...resourcesOf(template, 'AWS::CloudWatch::Alarm').values()].filter((alarm) =>
    watchedMetrics(alarm).some(test),
  );

describe('stages', () => {
  let dev: Synthesized;
  let prod: Synthesized;
  let prodSandbox: Synthesized;
  let everything: Synthesized;

  beforeAll(async () => {
    [dev, prod, prodSandbox, everything] = await synthesized(
      {},
      { stage: 'prod', ...PROD_PINNED, connectorUrl: CONNECTOR_URL, alarmEmail: ALARM_EMAIL },
      { stage: 'prod', ...PROD_PINNED, sandbox: 'true', alarmEmail: ALARM_EMAIL },
      {
        stage: 'staging',
        connectorUrl: CONNECTOR_URL,
        connectorSecretArn: SECRET_ARN,
        waf: 'true',
        tableCmk: 'true',
        apiGatewayCloudWatchRole: 'true',
        domainName: 'payments.bank.example',
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c',
        logRetentionDays: '400',
      },
    );
    // Four syntheses with cdk-nag on a shared machine, fewer when another file shares them.
  }, SYNTH_TIMEOUT_MS);
  const all = (): [string, Synthesized][] => [
    ['dev', dev],
    ['prod', prod],
    ['prod sandbox', prodSandbox],
    ['every option', everything],
  ];

  describe('names and settings', () => {
    it('names the stack after the stage', () => {
      expect(dev.stackName).toBe('CreditTransfers-dev');
      expect(prod.stackName).toBe('CreditTransfers-prod');
      expect(everything.stackName).toBe('CreditTransfers-staging');
    });

    it('gives no two stages the same physical name for anything', () => {
      const physicalNames = (template: Template): Set<string> => {
        const names = new Set<string>();
        for (const resource of Object.values(template.toJSON().Resources as Record<string, Resource>)) {
          for (const [property, value] of Object.entries(resource.Properties ?? {})) {
            // Names the account must keep unique; per-API names (stage, authorizer, operation) may repeat.
            if (
              !/Name$/.test(property) ||
              /^(StageName|OperationName|MetricName|PolicyName|DisplayName)$/.test(property)
            )
              continue;
            // References name resources of the same stack; only literal names can collide.
            if (resource.Type === 'AWS::ApiGateway::Authorizer' || typeof value !== 'string') continue;
            names.add(`${resource.Type} ${JSON.stringify(value)}`);
          }
        }
        return names;
      };
      const devNames = physicalNames(dev.template);
      expect(devNames.size).toBeGreaterThan(0);
      const shared = [...physicalNames(prod.template)].filter((name) => devNames.has(name));
      expect(shared).toEqual([]);
    });

    it('keeps the execution logs under /aws/vendedlogs/states/, one group per state machine and stage', () => {
      const machineLogGroups = (template: Template): unknown[] =>
        [...resourcesOf(template, 'AWS::StepFunctions::StateMachine').values()].map((machine) => {
          const config = machine.Properties.LoggingConfiguration as {
            Destinations: { CloudWatchLogsLogGroup: { LogGroupArn: unknown } }[];
          };
          const [groupId] = getAttTargets(config.Destinations[0]?.CloudWatchLogsLogGroup.LogGroupArn);
          return resourcesOf(template, 'AWS::Logs::LogGroup').get(groupId as string)?.Properties.LogGroupName;
        });
      for (const [stage, template] of [
        ['dev', dev.template],
        ['prod', prod.template],
      ] as const) {
        const groups = machineLogGroups(template);
        expect(groups).toHaveLength(2);
        expect(new Set(groups).size).toBe(2);
        for (const group of groups) expect(group).toMatch(new RegExp(`^/aws/vendedlogs/states/.+${stage}`));
      }
      // On prod only failures, without execution data: all the fast path (Express) keeps of a failed execution.
      for (const machine of resourcesOf(prod.template, 'AWS::StepFunctions::StateMachine').values())
        expect(machine.Properties.LoggingConfiguration).toMatchObject({
          Level: 'ERROR',
          IncludeExecutionData: false,
        });
    });

    it('keeps logs 90 days by default, a year on prod, as long as asked', () => {
      const retentions = (template: Template): Set<unknown> =>
        new Set(
          [...resourcesOf(template, 'AWS::Logs::LogGroup').values()].map((g) => g.Properties.RetentionInDays),
        );
      expect(retentions(dev.template)).toEqual(new Set([90]));
      expect(retentions(prod.template)).toEqual(new Set([365]));
      expect(retentions(everything.template)).toEqual(new Set([400]));
    });

    it('gives the tokens an issuer that names neither the API nor its stage path', () => {
      for (const [stage, { template }] of all()) {
        const issuers = new Set(
          [...functionsOf(template).values()]
            .map((fn) => environmentOf(fn).ISSUER)
            .filter((i) => i !== undefined),
        );
        const issuer = onlyOne(issuers, `issuer of ${stage}`);
        // A literal: no reference to the REST API, its deployment or stage can change it.
        expect(typeof issuer, stage).toBe('string');
        const url = new URL(issuer as string);
        expect(url.protocol, stage).toBe('https:');
        expect(url.pathname, stage).toBe('/');
        expect(url.hostname, stage).not.toContain('execute-api');
      }
      const withDomain = onlyOne(
        new Set(
          [...functionsOf(everything.template).values()]
            .map((fn) => environmentOf(fn).ISSUER)
            .filter(Boolean),
        ),
        'issuer',
      );
      expect(withDomain).toBe('https://payments.bank.example');
    });

    it('tells every route function the public URL: the custom domain, else the stage URL', () => {
      const publicUrls = (template: Template) =>
        ROUTES.map(
          (route) =>
            environmentOf(functionsOf(template).get(routeFunction(template, route.method, route.path)))
              .PUBLIC_URL,
        );
      for (const url of publicUrls(everything.template)) expect(url).toBe('https://payments.bank.example');
      for (const url of publicUrls(dev.template)) {
        // The stage URL of this REST API: its id, the region, and the stage name as a literal.
        expect(JSON.stringify(url)).toMatch(
          /"https:\/\/".*"Ref":"[^"]*RestApi[^"]*".*\.execute-api\..*"Ref":"AWS::Region".*\/dev"/,
        );
      }
    });

    it('serves a custom domain, TLS 1.2, mapped to the stage at its root', () => {
      const domain = onlyOne(
        resourcesOf(everything.template, 'AWS::ApiGateway::DomainName').values(),
        'domain',
      );
      expect(domain.Properties).toMatchObject({
        DomainName: 'payments.bank.example',
        SecurityPolicy: 'TLS_1_2',
        EndpointConfiguration: { Types: ['REGIONAL'] },
      });
      const mapping = onlyOne(
        resourcesOf(everything.template, 'AWS::ApiGateway::BasePathMapping').values(),
        'mapping',
      );
      expect(mapping.Properties.BasePath).toBeUndefined();
      expect(refOf(mapping.Properties.Stage)).toBe(
        onlyOne(resourcesOf(everything.template, 'AWS::ApiGateway::Stage').keys(), 'stage'),
      );
      dev.template.resourceCountIs('AWS::ApiGateway::DomainName', 0);
    });

    it('outputs the table and bus names operators administer clients and consumers with', () => {
      for (const [stage, { template }] of all()) {
        const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
        expect(refOf(outputs.TableName?.Value), stage).toBe(
          onlyOne(resourcesOf(template, 'AWS::DynamoDB::Table').keys(), 'table'),
        );
        expect(refOf(outputs.StatusEventBusName?.Value), stage).toBe(
          onlyOne(resourcesOf(template, 'AWS::Events::EventBus').keys(), 'bus'),
        );
      }
    });
  });

  describe('rail', () => {
    it('refuses prod without a connector URL or an explicit sandbox, in one line', () => {
      let message = '';
      try {
        synthesize({ stage: 'prod' });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/connectorUrl/);
      expect(message).toMatch(/sandbox=true/);
      expect(message).not.toContain('\n');
    });

    it('runs the sandbox on dev and on prod when asked, with no connector and no secret', () => {
      for (const { template } of [dev, prodSandbox]) {
        const workflow = [...Object.values(WORKFLOW_FUNCTIONS).map((fn) => fn.entry), RECONCILER_ENTRY];
        for (const entry of workflow) {
          const variables = environmentOf(functionsOf(template).get(workflowFunction(template, entry)));
          expect(variables.RAIL, entry).toBe('sandbox');
          expect(variables.CONNECTOR_URL, entry).toBeUndefined();
          expect(variables.CONNECTOR_SECRET_ARN, entry).toBeUndefined();
        }
        template.resourceCountIs('AWS::SecretsManager::Secret', 0);
        for (const id of functionsOf(template).keys()) {
          const actions = [...allowedActions(statementsOfFunction(template, id))];
          expect(
            actions.filter((action) => action.startsWith('secretsmanager:')),
            id,
          ).toEqual([]);
        }
      }
    });

    it('runs prod on the connector: every workflow function knows the rail, only its callers the URL and secret', () => {
      const { template } = prod;
      const secretId = onlyOne(resourcesOf(template, 'AWS::SecretsManager::Secret').keys(), 'secret');
      const callers = new Set(RAIL_CALLER_ENTRIES.map((entry) => workflowFunction(template, entry)));
      for (const entry of [...Object.values(WORKFLOW_FUNCTIONS).map((fn) => fn.entry), RECONCILER_ENTRY]) {
        const id = workflowFunction(template, entry);
        const variables = environmentOf(functionsOf(template).get(id));
        expect(variables.RAIL, entry).toBe('connector');
        expect(variables.CONNECTOR_URL, entry).toBe(callers.has(id) ? CONNECTOR_URL : undefined);
        expect(refOf(variables.CONNECTOR_SECRET_ARN), entry).toBe(callers.has(id) ? secretId : undefined);
      }
      for (const id of functionsOf(template).keys()) {
        const reads = statementsOfFunction(template, id).filter(
          (statement) =>
            statement.Effect === 'Allow' &&
            actionsOf(statement).some((a) => covers(a, 'secretsmanager:GetSecretValue')),
        );
        if (!callers.has(id)) {
          expect(reads, id).toEqual([]);
          continue;
        }
        expect(
          reads.map((statement) => statement.Resource),
          id,
        ).toEqual([{ Ref: secretId }]);
        expect(actionsOf(reads[0] as Statement), id).toEqual(['secretsmanager:GetSecretValue']);
      }
    });

    it('creates the connector secret generated and retained, or uses the one named', () => {
      prod.template.hasResource('AWS::SecretsManager::Secret', {
        Properties: { GenerateSecretString: {} },
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
      everything.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
      const caller = workflowFunction(everything.template, WORKFLOW_FUNCTIONS.submitToClearing.entry);
      expect(environmentOf(functionsOf(everything.template).get(caller)).CONNECTOR_SECRET_ARN).toBe(
        SECRET_ARN,
      );
      const statement = statementsOfFunction(everything.template, caller).find((s) =>
        actionsOf(s).includes('secretsmanager:GetSecretValue'),
      );
      expect(statement?.Resource).toBe(SECRET_ARN);
    });
  });

  describe('security', () => {
    it('has no unacknowledged cdk-nag AwsSolutions finding on any stage', () => {
      for (const [stage, synthesized] of all()) expect(synthesized.nagFindings, stage).toEqual([]);
    });

    it('lets no IAM administrator of the account administer the signing key nor sign; only the token function signs', () => {
      for (const [stage, { template }] of all()) {
        const [, key] = onlyOne(
          [...resourcesOf(template, 'AWS::KMS::Key')].filter(
            ([, k]) => k.Properties.KeyUsage === 'SIGN_VERIFY',
          ),
          'signing key',
        );
        const statements = (key.Properties.KeyPolicy as { Statement: PolicyStatement[] }).Statement;
        const allows = statements.filter((s) => s.Effect === 'Allow');
        const root = allows.filter((s) => JSON.stringify(s.Principal).includes(':root'));
        expect(root.length, stage).toBeGreaterThan(0);
        const rootActions = root.flatMap(actionsOf);
        // Administration is the key administrator's and the deployment's (findings.test.ts); the
        // root user itself keeps putting a policy, to recover the key.
        for (const administrative of ['kms:ScheduleKeyDeletion', 'kms:DisableKey']) {
          expect(
            rootActions.some((a) => covers(a, administrative)),
            `${stage} ${administrative}`,
          ).toBe(false);
        }
        for (const statement of root.filter((s) => actionsOf(s).includes('kms:PutKeyPolicy'))) {
          expect(statement.Condition, stage).toEqual({ StringEquals: { 'aws:PrincipalType': 'Account' } });
        }
        // Neither signing nor a grant that could hand signing to someone else.
        for (const forbidden of ['kms:Sign', 'kms:CreateGrant']) {
          expect(
            rootActions.filter((a) => covers(a, forbidden)),
            `${stage} ${forbidden}`,
          ).toEqual([]);
        }
        const signers = allows.filter((s) => actionsOf(s).some((a) => covers(a, 'kms:Sign')));
        const tokenRole = roleOf(template, routeFunction(template, 'POST', '/oauth/token'));
        expect(
          signers.map((s) => s.Principal),
          stage,
        ).toEqual([{ AWS: { 'Fn::GetAtt': [tokenRole, 'Arn'] } }]);
      }
    });

    it('conditions every service principal of a resource policy on the source account or resource', () => {
      for (const [stage, { template }] of all()) {
        const servicePrincipals = resourcePolicies(template).flatMap(([id, statements]) =>
          statements
            .filter((s) => s.Effect === 'Allow' && JSON.stringify(s.Principal ?? {}).includes('"Service"'))
            .map((s) => [id, s] as const),
        );
        expect(servicePrincipals.length, stage).toBeGreaterThan(0);
        for (const [id, statement] of servicePrincipals) {
          const keys = Object.values(statement.Condition ?? {}).flatMap((condition) =>
            Object.keys(condition),
          );
          expect(
            keys.some((key) => key === 'aws:SourceArn' || key === 'aws:SourceAccount'),
            `${stage} ${id} ${JSON.stringify(statement.Principal)}`,
          ).toBe(true);
        }
      }
    });

    it('leaves the account-wide API Gateway CloudWatch role alone unless asked', () => {
      dev.template.resourceCountIs('AWS::ApiGateway::Account', 0);
      prod.template.resourceCountIs('AWS::ApiGateway::Account', 0);
      everything.template.resourceCountIs('AWS::ApiGateway::Account', 1);
    });

    it('writes JSON access logs to a log group of the stack, and traces the stage', () => {
      for (const [stage, { template }] of all()) {
        const apiStage = onlyOne(resourcesOf(template, 'AWS::ApiGateway::Stage').values(), 'stage');
        const setting = apiStage.Properties.AccessLogSetting as { DestinationArn: unknown; Format: string };
        const destination = JSON.stringify(setting.DestinationArn);
        const groups = [...resourcesOf(template, 'AWS::Logs::LogGroup').keys()].filter((id) =>
          destination.includes(`"${id}"`),
        );
        expect(groups, stage).toHaveLength(1);
        expect(() => JSON.parse(setting.Format), stage).not.toThrow();
        expect(apiStage.Properties.TracingEnabled, stage).toBe(true);
      }
    });

    it('puts a regional WAF web ACL on the prod stage: a rate limit for the API, a stricter one for /oauth/token', () => {
      for (const { template } of [prod, prodSandbox, everything]) {
        const [aclId, acl] = onlyOne(resourcesOf(template, 'AWS::WAFv2::WebACL'), 'web ACL');
        expect(acl.Properties.Scope).toBe('REGIONAL');
        const association = onlyOne(
          resourcesOf(template, 'AWS::WAFv2::WebACLAssociation').values(),
          'association',
        );
        expect(getAttTargets(association.Properties.WebACLArn)).toEqual([aclId]);
        const stageId = onlyOne(resourcesOf(template, 'AWS::ApiGateway::Stage').keys(), 'stage');
        expect(JSON.stringify(association.Properties.ResourceArn)).toContain(`{"Ref":"${stageId}"}`);

        type RateRule = {
          Statement: { RateBasedStatement?: { Limit: number; ScopeDownStatement?: unknown } };
          Action?: unknown;
        };
        const rateRules = (acl.Properties.Rules as RateRule[]).filter(
          (rule) => rule.Statement.RateBasedStatement,
        );
        const whole = rateRules.filter(
          (rule) => rule.Statement.RateBasedStatement?.ScopeDownStatement === undefined,
        );
        const scoped = rateRules.filter(
          (rule) => rule.Statement.RateBasedStatement?.ScopeDownStatement !== undefined,
        );
        expect(whole).toHaveLength(1);
        expect(scoped).toHaveLength(1);
        expect(JSON.stringify(scoped[0]?.Statement.RateBasedStatement?.ScopeDownStatement)).toContain(
          '/oauth/token',
        );
        expect(scoped[0]?.Statement.RateBasedStatement?.Limit).toBeLessThan(
          whole[0]?.Statement.RateBasedStatement?.Limit as number,
        );
        for (const rule of rateRules) expect(rule.Action).toEqual({ Block: {} });
      }
      dev.template.resourceCountIs('AWS::WAFv2::WebACL', 0);
      prod.template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    });

    it('caches authorizer answers at most 30 seconds', () => {
      for (const [stage, { template }] of all()) {
        const authorizer = onlyOne(
          resourcesOf(template, 'AWS::ApiGateway::Authorizer').values(),
          'authorizer',
        );
        expect(authorizer.Properties.AuthorizerResultTtlInSeconds, stage).toBeLessThanOrEqual(30);
      }
    });
  });

  describe('data and events', () => {
    it('keeps the table on every stage: on-demand, point-in-time recovery, deletion protection, retained, TTL on expiresAt', () => {
      for (const [stage, { template }] of all()) {
        const table = onlyOne(resourcesOf(template, 'AWS::DynamoDB::Table').values(), 'table');
        expect(table.DeletionPolicy, stage).toBe('Retain');
        expect(table.UpdateReplacePolicy, stage).toBe('Retain');
        expect(table.Properties, stage).toMatchObject({
          BillingMode: 'PAY_PER_REQUEST',
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: true,
          TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
          SSESpecification: { SSEEnabled: true },
        });
      }
    });

    it('encrypts the table with a rotated, retained key of its own only when asked', () => {
      const sse = (s: Synthesized): Record<string, unknown> =>
        onlyOne(resourcesOf(s.template, 'AWS::DynamoDB::Table').values(), 'table').Properties
          .SSESpecification as Record<string, unknown>;
      expect(sse(dev).KMSMasterKeyId).toBeUndefined();
      const [keyId] = getAttTargets(sse(everything).KMSMasterKeyId);
      const key = resourcesOf(everything.template, 'AWS::KMS::Key').get(keyId as string);
      expect(key?.Properties.EnableKeyRotation).toBe(true);
      expect(key?.DeletionPolicy).toBe('Retain');
      // The functions that write the table may use its key.
      const initiate = routeFunction(everything.template, 'POST', '/v1/payments/credit-transfers');
      const keyStatements = statementsOfFunction(everything.template, initiate).filter((s) =>
        getAttTargets(s.Resource).includes(keyId as string),
      );
      expect(keyStatements.flatMap(actionsOf)).toEqual(
        expect.arrayContaining(['kms:Decrypt', 'kms:GenerateDataKey']),
      );
    });

    it('projects only keys and one filter map into the list indexes, so a new filter changes no index', () => {
      const table = onlyOne(resourcesOf(dev.template, 'AWS::DynamoDB::Table').values(), 'table');
      const indexes = table.Properties.GlobalSecondaryIndexes as {
        IndexName: string;
        Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
      }[];
      const list = indexes.filter((index) => index.IndexName.startsWith('list'));
      expect(list.length).toBeGreaterThan(0);
      const projections = new Set(list.map((index) => JSON.stringify(index.Projection)));
      expect(projections.size).toBe(1);
      for (const index of list) {
        expect(index.Projection.ProjectionType, index.IndexName).toBe('INCLUDE');
        expect(index.Projection.NonKeyAttributes, index.IndexName).toHaveLength(1);
      }
    });

    it('lets the token function read clients and update its throttle items', () => {
      for (const [stage, { template }] of all()) {
        const tableId = onlyOne(resourcesOf(template, 'AWS::DynamoDB::Table').keys(), 'table');
        const statements = statementsOfFunction(template, routeFunction(template, 'POST', '/oauth/token'));
        for (const action of ['dynamodb:GetItem', 'dynamodb:UpdateItem']) {
          const granting = statements.filter((s) => s.Effect === 'Allow' && actionsOf(s).includes(action));
          // The client and throttle items, and (GetItem) the signing key schedule: the table alone.
          expect(granting.length, `${stage} ${action}`).toBeGreaterThan(0);
          for (const statement of granting)
            expect(getAttTargets(statement.Resource), `${stage} ${action}`).toEqual([tableId]);
        }
      }
    });

    it('archives every event of the bus for replay', () => {
      for (const [stage, { template }] of all()) {
        const busId = onlyOne(resourcesOf(template, 'AWS::Events::EventBus').keys(), 'bus');
        const archive = onlyOne(resourcesOf(template, 'AWS::Events::Archive').values(), 'archive');
        expect(getAttTargets(archive.Properties.SourceArn), stage).toEqual([busId]);
        expect(archive.Properties.RetentionDays, stage).toBeGreaterThan(0);
      }
    });

    it('copies status changes to an encrypted, TLS-only queue, with dead-letter queues for the rule and the queue, except on prod', () => {
      const exampleConsumerRules = (template: Template) =>
        [...resourcesOf(template, 'AWS::Events::Rule').values()].filter((r) =>
          String(r.Properties.Description).includes('example consumer'),
        );
      // On prod nothing reads the example queue, so its oldest-message alarm would fire after go-live.
      for (const [stage, { template }] of all().filter(([name]) => name.startsWith('prod')))
        expect(exampleConsumerRules(template), stage).toEqual([]);
      for (const [stage, { template }] of all().filter(([name]) => !name.startsWith('prod'))) {
        const busId = onlyOne(resourcesOf(template, 'AWS::Events::EventBus').keys(), 'bus');
        const queues = resourcesOf(template, 'AWS::SQS::Queue');
        const rule = onlyOne(
          [...resourcesOf(template, 'AWS::Events::Rule').values()].filter(
            (r) =>
              refOf(r.Properties.EventBusName) === busId &&
              String(r.Properties.Description).includes('example consumer'),
          ),
          'rule on the bus',
        );
        // Status changes and batch completions: the queue carries what the webhooks carry.
        expect((rule.Properties.EventPattern as Record<string, unknown>)['detail-type'], stage).toEqual([
          'CreditTransferStatusChanged',
          'CreditTransferBatchCompleted',
        ]);
        const target = onlyOne(
          rule.Properties.Targets as { Arn: unknown; DeadLetterConfig?: { Arn: unknown } }[],
          'target',
        );
        const [queueId] = getAttTargets(target.Arn);
        const [ruleDlqId] = getAttTargets(target.DeadLetterConfig?.Arn);
        const queue = queues.get(queueId as string);
        const [queueDlqId] = getAttTargets(
          (queue?.Properties.RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined)
            ?.deadLetterTargetArn,
        );
        expect(new Set([queueId, ruleDlqId, queueDlqId]).size, stage).toBe(3);

        for (const id of [queueId, ruleDlqId, queueDlqId] as string[]) {
          const properties = queues.get(id)?.Properties ?? {};
          expect(
            properties.SqsManagedSseEnabled === true || properties.KmsMasterKeyId !== undefined,
            `${stage} ${id}`,
          ).toBe(true);
          const policy = [...resourcesOf(template, 'AWS::SQS::QueuePolicy').values()].find((p) =>
            (p.Properties.Queues as unknown[]).some((q) => refOf(q) === id),
          );
          const statements =
            (policy?.Properties.PolicyDocument as { Statement: PolicyStatement[] } | undefined)?.Statement ??
            [];
          expect(
            statements.some(
              (s) =>
                s.Effect === 'Deny' &&
                JSON.stringify(s.Condition) === '{"Bool":{"aws:SecureTransport":"false"}}',
            ),
            `${stage} ${id} TLS only`,
          ).toBe(true);
        }
      }
    });
  });

  describe('observability', () => {
    it('sends every alarm to a KMS-encrypted topic: the paging one or the ticket one', () => {
      for (const [stage, { template }] of all()) {
        const topics = resourcesOf(template, 'AWS::SNS::Topic');
        expect(topics.size, stage).toBe(2);
        for (const topic of topics.values()) expect(topic.Properties.KmsMasterKeyId, stage).toBeDefined();
        const alarms = [...resourcesOf(template, 'AWS::CloudWatch::Alarm')];
        expect(alarms.length, stage).toBeGreaterThan(0);
        for (const [id, alarm] of alarms) {
          const actions = alarm.Properties.AlarmActions as unknown[] | undefined;
          expect(actions?.length, `${stage} ${id}`).toBeGreaterThan(0);
          for (const action of actions ?? [])
            expect([...topics.keys()], `${stage} ${id}`).toContain(refOf(action));
        }
      }
    });

    it('mails the alarms only where an address is given', () => {
      prod.template.hasResourceProperties('AWS::SNS::Subscription', {
        Protocol: 'email',
        Endpoint: ALARM_EMAIL,
      });
      dev.template.resourceCountIs('AWS::SNS::Subscription', 0);
    });

    it('alarms on API 5xx rate, p99 latency and authorizer errors', () => {
      for (const [stage, { template }] of all()) {
        const stageId = onlyOne(resourcesOf(template, 'AWS::ApiGateway::Stage').keys(), 'stage');
        const ofStage = (m: WatchedMetric): boolean => refOf(m.dimensions.Stage) === stageId;
        const fiveXx = alarmsWatching(
          template,
          (m) => m.namespace === 'AWS/ApiGateway' && m.name === '5XXError' && ofStage(m),
        );
        expect(fiveXx, stage).toHaveLength(1);
        // A rate: 5xx relative to the requests.
        expect(
          watchedMetrics(fiveXx[0] as Resource)
            .map((m) => m.name)
            .sort(),
          stage,
        ).toEqual(['5XXError', 'Count']);
        expect(
          alarmsWatching(template, (m) => m.name === 'Latency' && m.statistic === 'p99' && ofStage(m)),
          stage,
        ).toHaveLength(1);
        const authorizer = authorizerFunction(template);
        expect(
          alarmsWatching(
            template,
            (m) => m.name === 'Errors' && refOf(m.dimensions.FunctionName) === authorizer,
          ),
          stage,
        ).toHaveLength(1);
      }
    });

    it('alarms on errors and throttles of every function', () => {
      for (const [stage, { template }] of all()) {
        for (const [id, fn] of functionsOf(template)) {
          // The reconciler's errors twice: one failed run (ticket), failing run after run (page).
          const reconciler = String(fn.Properties.Description ?? '').startsWith('Lifecycle: drives on');
          for (const metric of ['Errors', 'Throttles']) {
            expect(
              alarmsWatching(
                template,
                (m) =>
                  m.namespace === 'AWS/Lambda' &&
                  m.name === metric &&
                  refOf(m.dimensions.FunctionName) === id,
              ),
              `${stage} ${id} ${metric}`,
            ).toHaveLength(reconciler && metric === 'Errors' ? 2 : 1);
          }
        }
      }
    });

    it('alarms on failed and timed-out executions, stuck transfers, table throttles and both dead-letter queues', () => {
      for (const [stage, { template }] of all()) {
        // Both machines' executions, each alarm summing the fast path's and the long waits'.
        for (const machineId of resourcesOf(template, 'AWS::StepFunctions::StateMachine').keys()) {
          for (const metric of ['ExecutionsFailed', 'ExecutionsTimedOut']) {
            expect(
              alarmsWatching(
                template,
                (m) => m.name === metric && refOf(m.dimensions.StateMachineArn) === machineId,
              ),
              `${stage} ${metric} ${machineId}`,
            ).toHaveLength(1);
          }
        }
        expect(
          alarmsWatching(
            template,
            (m) =>
              m.namespace === 'CreditTransfers' &&
              m.name === 'TransfersStuck' &&
              m.dimensions.service === 'credit-transfers',
          ),
          stage,
        ).toHaveLength(1);
        const tableId = onlyOne(resourcesOf(template, 'AWS::DynamoDB::Table').keys(), 'table');
        const throttles = alarmsWatching(
          template,
          (m) => m.namespace === 'AWS/DynamoDB' && refOf(m.dimensions.TableName) === tableId,
        );
        expect(throttles, stage).toHaveLength(1);
        expect(
          watchedMetrics(throttles[0] as Resource)
            .map((m) => m.name)
            .sort(),
          stage,
        ).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);

        // Every queue that is a dead-letter queue of a queue or of a rule target.
        const deadLetterQueues = new Set([
          ...[...resourcesOf(template, 'AWS::SQS::Queue').values()].flatMap((q) =>
            getAttTargets(
              (q.Properties.RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined)
                ?.deadLetterTargetArn,
            ),
          ),
          ...[...resourcesOf(template, 'AWS::Events::Rule').values()].flatMap((r) =>
            ((r.Properties.Targets ?? []) as { DeadLetterConfig?: { Arn: unknown } }[]).flatMap((t) =>
              getAttTargets(t.DeadLetterConfig?.Arn),
            ),
          ),
        ]);
        // The example consumer's two, and webhook delivery's two.
        // The webhook rule's and queue's, and on stages with the example consumer its two as well.
        expect(deadLetterQueues.size, stage).toBe(stage.startsWith('prod') ? 2 : 4);
        for (const queueId of deadLetterQueues) {
          expect(
            alarmsWatching(
              template,
              (m) =>
                m.name === 'ApproximateNumberOfMessagesVisible' &&
                getAttTargets(m.dimensions.QueueName).includes(queueId),
            ),
            `${stage} ${queueId}`,
          ).toHaveLength(1);
        }
      }
    });

    it('has one dashboard showing every alarm', () => {
      for (const [stage, { template }] of all()) {
        const dashboard = onlyOne(resourcesOf(template, 'AWS::CloudWatch::Dashboard').values(), 'dashboard');
        const body = JSON.stringify(dashboard.Properties.DashboardBody);
        for (const id of resourcesOf(template, 'AWS::CloudWatch::Alarm').keys()) {
          expect(body, `${stage} ${id}`).toContain(`"${id}"`);
        }
      }
    });

    it('traces both state machines and every function, the status-event queue reader as part of a sampled caller only', () => {
      for (const [stage, { template }] of all()) {
        for (const machine of resourcesOf(template, 'AWS::StepFunctions::StateMachine').values())
          expect(machine.Properties.TracingConfiguration, stage).toEqual({ Enabled: true });
        for (const [id, fn] of functionsOf(template)) {
          const queueReader = String(fn.Properties.Description).includes('records status events');
          expect(fn.Properties.TracingConfig, `${stage} ${id}`).toEqual({
            Mode: queueReader ? 'PassThrough' : 'Active',
          });
        }
      }
    });
  });
});
