import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { stackNameOf } from '../../lib/credit-transfer-app.ts';
import { CreditTransferStack } from '../../lib/credit-transfer-stack.ts';
import { stageConfig } from '../../lib/stage-config.ts';

/**
 * What the bill reads from the stack definition itself: the `prod` stage synthesized (bundling
 * skipped, no checks run), then each function's memory, architecture, tracing and log levels (a
 * function is named by its handler entry, as its role's description gives it), the workflow's
 * type, log level and tracing, and everything that costs by the month whether or not a payment
 * is made: alarms, keys, secrets, the web ACL and its rules, schedules, provisioned concurrency.
 */

type Resource = { Type: string; Properties?: Record<string, unknown> };
type Resources = Record<string, Resource>;

export interface StackFunction {
  logicalId: string;
  entry: string;
  memoryMb: number;
  architecture: 'arm64' | 'x86_64';
  tracing: 'Active' | 'PassThrough';
  /** Lambda's own START/END/REPORT lines are written unless the system log level is WARN or higher. */
  platformLines: boolean;
  provisionedConcurrency: number;
}

export interface StackSchedule {
  name: string;
  /** Runs a month (30 days). */
  runsPerMonth: number;
  /** Function run, by handler entry. */
  target?: string;
  scheduler: boolean;
}

export interface StackFigures {
  stackName: string;
  functions: Map<string, StackFunction>;
  workflow: {
    type: 'STANDARD' | 'EXPRESS';
    logLevel: string;
    includeExecutionData: boolean;
    tracing: boolean;
  }[];
  /** The sampling rule the stage sets up, when it has one; else X-Ray's default rule applies. */
  samplingRule?: { fixedRate: number; reservoirSize: number };
  apiTracing: boolean;
  /** The functions' POWERTOOLS_LOG_LEVEL (Powertools' default, INFO, when unset). */
  logLevel: string;
  /** The API stage's access log line format, when it writes one. */
  accessLogFormat?: string;
  /** Queues that receive every status event (EventBridge rules targeting SQS). */
  statusEventQueues: number;
  /** Of those, the ones a function of the stack reads (each message received and deleted). */
  statusEventReaders: number;
  /** Every SQS event source of the stack: Lambda polls each of them, idle or not. */
  sqsEventSources: number;
  alarms: { name: string; metrics: number }[];
  dashboards: number;
  kmsKeys: number;
  secrets: number;
  webAcl?: { rules: number; logsEveryRequest: boolean };
  schedules: StackSchedule[];
}

const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: object }
).context;

/** The context a production stage is deployed with: the connector rail (so its secret), a pager address. */
export const PRODUCTION_CONTEXT = {
  stage: 'prod',
  // prod is pinned to an account, a region and a key administrator, and names its domain or
  // none (lib/stage-config.ts); which ones changes no figure.
  account: '123456789012',
  region: 'eu-west-1',
  keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
  noCustomDomain: 'true',
  connectorUrl: 'https://connector.bank.example',
  alarmEmail: 'oncall@bank.example',
};

const getAttId = (value: unknown): string | undefined => {
  const att = (value as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
  return att?.[0];
};
const refId = (value: unknown): string | undefined =>
  (value as { Ref?: string } | undefined)?.Ref ?? getAttId(value);

/** Runs a month of `rate(n unit)` or `cron(...)` (only the rates this stack uses are read exactly). */
const runsPerMonth = (expression: string): number => {
  const rate = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!rate) throw new Error(`schedule ${expression}: only rate() expressions are counted`);
  const minutes =
    Number(rate[1]) * (rate[2]?.startsWith('hour') ? 60 : rate[2]?.startsWith('day') ? 1440 : 1);
  return (30 * 24 * 60) / minutes;
};

export const readStackFigures = (context: Record<string, string> = PRODUCTION_CONTEXT): StackFigures => {
  // Only the resources are read: CDK's own CloudFormation validation is left to `cdk synth`.
  const app = new App({
    builtinCloudFormationValidation: false,
    context: { ...CDK_JSON_CONTEXT, ...context, 'aws:cdk:bundling-stacks': [] },
  });
  const config = stageConfig((name) => app.node.tryGetContext(name));
  const stack = new CreditTransferStack(app, stackNameOf(config.stage), { config });
  const resources = (Template.fromStack(stack).toJSON() as { Resources: Resources }).Resources;
  const ofType = (type: string) =>
    Object.entries(resources).filter(([, resource]) => resource.Type === type) as [
      string,
      Resource & { Properties: Record<string, unknown> },
    ][];

  const provisioned = new Map<string, number>();
  for (const [, alias] of ofType('AWS::Lambda::Alias')) {
    const fn = refId(alias.Properties.FunctionName);
    const count = (
      alias.Properties.ProvisionedConcurrencyConfig as { ProvisionedConcurrentExecutions?: number }
    )?.ProvisionedConcurrentExecutions;
    if (fn && count) provisioned.set(fn, count);
  }
  const functions = new Map<string, StackFunction>();
  const entryByLogicalId = new Map<string, string>();
  for (const [logicalId, fn] of ofType('AWS::Lambda::Function')) {
    const role = resources[getAttId(fn.Properties.Role) ?? '']?.Properties?.Description;
    const entry = /^Runs (\S+)$/.exec(String(role ?? ''))?.[1];
    // CDK's own deploy-time functions (custom resources) run only when the stack changes.
    if (entry === undefined) continue;
    const logging = (fn.Properties.LoggingConfig ?? {}) as { SystemLogLevel?: string };
    functions.set(entry, {
      logicalId,
      entry,
      memoryMb: Number(fn.Properties.MemorySize ?? 128),
      architecture: ((fn.Properties.Architectures as string[] | undefined)?.[0] ?? 'x86_64') as
        | 'arm64'
        | 'x86_64',
      tracing: ((fn.Properties.TracingConfig as { Mode?: string } | undefined)?.Mode ?? 'PassThrough') as
        | 'Active'
        | 'PassThrough',
      platformLines: !['WARN', 'ERROR', 'FATAL'].includes(logging.SystemLogLevel ?? 'INFO'),
      provisionedConcurrency: provisioned.get(logicalId) ?? 0,
    });
    entryByLogicalId.set(logicalId, entry);
  }

  const workflow = ofType('AWS::StepFunctions::StateMachine').map(([, machine]) => {
    const logging = (machine.Properties.LoggingConfiguration ?? {}) as {
      Level?: string;
      IncludeExecutionData?: boolean;
    };
    return {
      type: (machine.Properties.StateMachineType ?? 'STANDARD') as 'STANDARD' | 'EXPRESS',
      logLevel: logging.Level ?? 'OFF',
      includeExecutionData: logging.IncludeExecutionData ?? false,
      tracing:
        (machine.Properties.TracingConfiguration as { Enabled?: boolean } | undefined)?.Enabled ?? false,
    };
  });

  const samplingRule = ofType('AWS::XRay::SamplingRule').map(([, rule]) => {
    const body = rule.Properties.SamplingRule as { FixedRate: number; ReservoirSize: number };
    return { fixedRate: body.FixedRate, reservoirSize: body.ReservoirSize };
  })[0];

  const isQueue = (arn: unknown) => resources[getAttId(arn) ?? '']?.Type === 'AWS::SQS::Queue';
  const statusEventQueueIds = ofType('AWS::Events::Rule')
    .filter(([, rule]) => rule.Properties.EventPattern !== undefined)
    .flatMap(([, rule]) => (rule.Properties.Targets as { Arn: unknown }[]).filter((t) => isQueue(t.Arn)))
    .map((target) => getAttId(target.Arn));
  const eventSources = ofType('AWS::Lambda::EventSourceMapping');
  const statusEventReaders = eventSources.filter(([, mapping]) =>
    statusEventQueueIds.includes(getAttId(mapping.Properties.EventSourceArn)),
  ).length;

  const schedules: StackSchedule[] = [
    ...ofType('AWS::Scheduler::Schedule').map(([name, schedule]) => {
      const target = entryByLogicalId.get(
        getAttId((schedule.Properties.Target as { Arn: unknown }).Arn) ?? '',
      );
      return {
        name,
        runsPerMonth: runsPerMonth(String(schedule.Properties.ScheduleExpression)),
        scheduler: true,
        ...(target && { target }),
      };
    }),
    ...ofType('AWS::Events::Rule')
      .filter(([, rule]) => rule.Properties.ScheduleExpression !== undefined)
      .map(([name, rule]) => {
        const target = entryByLogicalId.get(
          getAttId((rule.Properties.Targets as { Arn: unknown }[])[0]?.Arn) ?? '',
        );
        return {
          name,
          runsPerMonth: runsPerMonth(String(rule.Properties.ScheduleExpression)),
          scheduler: false,
          ...(target && { target }),
        };
      }),
  ];

  const webAcls = ofType('AWS::WAFv2::WebACL');
  const wafLogging = ofType('AWS::WAFv2::LoggingConfiguration')[0];
  const stage = ofType('AWS::ApiGateway::Stage')[0];
  const accessLogFormat = (stage?.[1].Properties.AccessLogSetting as { Format?: string } | undefined)?.Format;

  return {
    stackName: stack.stackName,
    functions,
    workflow,
    ...(samplingRule && { samplingRule }),
    apiTracing: Boolean(stage?.[1].Properties.TracingEnabled),
    logLevel:
      ofType('AWS::Lambda::Function')
        .map(
          ([, fn]) =>
            (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
              ?.POWERTOOLS_LOG_LEVEL,
        )
        .find((level) => typeof level === 'string')
        ?.toString() ?? 'INFO',
    ...(accessLogFormat !== undefined && { accessLogFormat }),
    statusEventQueues: statusEventQueueIds.length,
    statusEventReaders,
    sqsEventSources: eventSources.length,
    alarms: ofType('AWS::CloudWatch::Alarm').map(([name, alarm]) => ({
      name,
      metrics: Array.isArray(alarm.Properties.Metrics)
        ? (alarm.Properties.Metrics as { MetricStat?: unknown }[]).filter((m) => m.MetricStat).length
        : 1,
    })),
    dashboards: ofType('AWS::CloudWatch::Dashboard').length,
    kmsKeys: ofType('AWS::KMS::Key').length,
    secrets: ofType('AWS::SecretsManager::Secret').reduce(
      (sum, [, secret]) =>
        sum + 1 + ((secret.Properties.ReplicaRegions as unknown[] | undefined)?.length ?? 0),
      0,
    ),
    ...(webAcls[0] && {
      webAcl: {
        rules: (webAcls[0][1].Properties.Rules as unknown[]).length,
        logsEveryRequest: wafLogging !== undefined && wafLogging[1].Properties.LoggingFilter === undefined,
      },
    }),
    schedules,
  };
};
