import { ArnFormat, Aws, Duration, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { PARKED_TRANSFERS_METRIC, RAIL_UNAVAILABLE_METRIC } from '#shared/metrics';
import { keyPolicy } from './key-policy.ts';
import { TRANSFERS_STUCK_METRIC } from './lifecycle-workflow.ts';

export interface MonitoringProps {
  /** Names the dashboard, unique per account (dashboards are global). */
  readonly name: string;
  readonly stage: Stage;
  /** The stage's access log (one JSON line per request): the refusals of authenticated calls. */
  readonly accessLogs?: ILogGroup;
  /** The stage's name: the `stage` dimension of the service's own metrics. */
  readonly stageName: string;
  /** Every function of the stack, by a readable name. */
  readonly functions: ReadonlyMap<string, LambdaFunction>;
  readonly authorizer: LambdaFunction;
  /** The reconciler and how often its schedule runs it: its heartbeat. */
  readonly reconciler: { readonly function: LambdaFunction; readonly every: Duration };
  /** The lifecycle's fast path (Express), where every transfer and every recovery starts. */
  readonly stateMachine: StateMachine;
  /** The lifecycle's machine of long waits (Standard): its executions count in the same alarms. */
  readonly longWaits?: StateMachine;
  readonly table: Table;
  /** Dead-letter queues, by a readable name: any message in one is an alarm. */
  readonly deadLetterQueues: ReadonlyMap<string, IQueue>;
  /** Counts, by a readable name, of which any is an alarm (e.g. webhook endpoints disabled). */
  readonly countAlarms?: ReadonlyMap<string, { description: string; metric: IMetric; severity?: Severity }>;
  /** Every queue (dead-letter queues too), with the age its oldest message may reach. */
  readonly queueAges: ReadonlyMap<
    string,
    { readonly queue: IQueue; readonly oldestMessageBound: Duration; readonly severity?: Severity }
  >;
  /** The web ACL's name, when there is one: its blocked requests. */
  readonly webAclName?: string;
  /** Subscribed to the paging topic. */
  readonly alarmEmail?: string;
  /** An existing topic the paging alarms notify as well (the team's pager). */
  readonly alarmTopicArn?: string;
  /** Subscribed to the ticket topic. */
  readonly ticketEmail?: string;
  /** An existing topic the ticket alarms notify as well (the team's ticket queue). */
  readonly ticketTopicArn?: string;
}

/**
 * `page`: money is at risk or clients are refused now (someone is woken); `ticket`: worth a look
 * in working hours. docs/operations.md lists every alarm with its severity and first command.
 */
export type Severity = 'page' | 'ticket';

/** Functions whose throttles one alarm sums: CloudWatch's bound on the metrics of a math alarm. */
const THROTTLE_GROUP_SIZE = 10;

/** Bounds of the alarms; each is a judgement to revisit with real traffic (docs/decisions.md). */
export const ALARM_BOUNDS = {
  /** Percent of requests answered 5xx over five minutes. */
  api5xxPercent: 1,
  /** p99 latency of the API, milliseconds, three five-minute periods in a row. */
  apiP99LatencyMs: 2500,
  /** A function's p99 duration, percent of its timeout: a little slower and calls start to time out. */
  functionDurationPercentOfTimeout: 80,
  /**
   * Requests WAF blocked in five minutes: well above one client over the token endpoint's limit
   * (300 per 5 minutes), so it means many addresses or a rule refusing real traffic.
   */
  wafBlockedRequests: 500,
  /**
   * Percent of authenticated calls (the authorizer named a client) answered 403 in five minutes,
   * once there are at least `forbiddenMinimumCalls`: a tenant whose API key is in no usage plan
   * (every call refused), or a client given the wrong scopes.
   */
  authenticatedForbiddenPercent: 10,
  forbiddenMinimumCalls: 20,
} as const;

/** Metrics counted from the access log, namespace CreditTransfers, dimension stage. */
export const AUTHENTICATED_CALLS_METRIC = 'AuthenticatedCalls';
export const AUTHENTICATED_FORBIDDEN_METRIC = 'AuthenticatedCallsForbidden';

/** The KMS calls on a key of the stage that page (KeyChanges). */
export const PAGED_KEY_CALLS = ['ScheduleKeyDeletion', 'DisableKey', 'PutKeyPolicy'] as const;

/** Schedule periods in a row with a failed reconciler run before it pages. */
export const RECONCILER_FAILING_PERIODS = 3;

/**
 * Alarms on everything that means money stops moving or clients are refused, each to one of two
 * KMS-encrypted SNS topics by its severity: the paging topic (mailed to `alarmEmail`, and
 * `alarmTopicArn`) and the ticket topic (`ticketEmail`, `ticketTopicArn`); one dashboard with them.
 */
export class Monitoring extends Construct {
  /** The paging topic. */
  readonly topic: Topic;
  readonly ticketTopic: Topic;
  readonly alarms: Alarm[] = [];
  /** Each alarm's id and severity, in the order created (docs/operations.md lists them). */
  readonly severities = new Map<string, Severity>();
  readonly dashboard: Dashboard;
  private readonly alarmTopicArn: string | undefined;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.alarmTopicArn = props.alarmTopicArn;
    const stack = Stack.of(this);
    // Only this account's alarms may use the key and the topic.
    const alarmsOfThisAccount = {
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'cloudwatch',
          resource: 'alarm',
          resourceName: '*',
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      },
    };

    // The rule that pages on key changes (pageOnKeyChanges) publishes to the paging topic too.
    const rulesOfThisAccount = {
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({ service: 'events', resource: 'rule', resourceName: '*' }),
      },
    };

    // Only CloudWatch alarms and EventBridge rules use the key; the account only administers it.
    const key = new Key(this, 'TopicKey', {
      description: 'Encrypts the credit transfer alarm topic',
      enableKeyRotation: true,
      policy: keyPolicy(
        this,
        {},
        new PolicyStatement({
          sid: 'CloudWatchAlarmsPublish',
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: alarmsOfThisAccount,
        }),
        new PolicyStatement({
          sid: 'EventBridgeRulesPublish',
          principals: [new ServicePrincipal('events.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: rulesOfThisAccount,
        }),
      ),
    });
    // The paging topic keeps the id the single alarm topic had, so a deployed stage keeps its subscriptions.
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: `Credit transfers ${props.name} alarms that page`,
      masterKey: key,
      enforceSSL: true,
    });
    this.ticketTopic = new Topic(this, 'TicketTopic', {
      displayName: `Credit transfers ${props.name} alarms for a ticket`,
      masterKey: key,
      enforceSSL: true,
    });
    for (const topic of [this.topic, this.ticketTopic]) {
      topic.addToResourcePolicy(
        new PolicyStatement({
          sid: 'CloudWatchAlarmsPublish',
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['sns:Publish'],
          resources: [topic.topicArn],
          conditions: alarmsOfThisAccount,
        }),
      );
    }
    if (props.alarmEmail !== undefined) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    if (props.ticketEmail !== undefined)
      this.ticketTopic.addSubscription(new EmailSubscription(props.ticketEmail));
    const actionsOf = (own: ITopic, arn: string | undefined, id: string) =>
      [own, ...(arn === undefined ? [] : [Topic.fromTopicArn(this, id, arn)])].map(
        (topic) => new SnsAction(topic),
      );
    const actions: Record<Severity, SnsAction[]> = {
      page: actionsOf(this.topic, props.alarmTopicArn, 'SubscriberTopic'),
      ticket: actionsOf(this.ticketTopic, props.ticketTopicArn, 'TicketSubscriberTopic'),
    };

    /**
     * Every alarm states what missing data means: NOT_BREACHING where no data means nothing
     * happened (no requests, no errors, no messages), BREACHING where it means something that
     * should happen did not.
     */
    const alarm = (
      alarmId: string,
      severity: Severity,
      description: string,
      metric: IMetric,
      threshold: number,
      missing: TreatMissingData,
      options: { evaluationPeriods?: number; below?: boolean } = {},
    ): Alarm => {
      const created = new Alarm(this, alarmId, {
        alarmDescription: `${severity === 'page' ? 'PAGE' : 'TICKET'}: ${description} (docs/operations.md, alarm ${alarmId})`,
        metric,
        threshold,
        evaluationPeriods: options.evaluationPeriods ?? 1,
        comparisonOperator: options.below
          ? ComparisonOperator.LESS_THAN_THRESHOLD
          : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: missing,
      });
      created.addAlarmAction(...actions[severity]);
      created.addOkAction(...actions[severity]);
      this.alarms.push(created);
      this.severities.set(alarmId, severity);
      return created;
    };
    const quiet = TreatMissingData.NOT_BREACHING;
    const fiveMinutes = Duration.minutes(5);

    const requests = props.stage.metricCount({ period: fiveMinutes });
    const serverErrors = props.stage.metricServerError({ period: fiveMinutes });
    const api5xxRate = new MathExpression({
      expression: '100 * errors / IF(requests > 0, requests, 1)',
      usingMetrics: { errors: serverErrors, requests },
      label: 'API 5xx (% of requests)',
      period: fiveMinutes,
    });
    alarm(
      'Api5xxRate',
      'page',
      `API answered 5xx to ${ALARM_BOUNDS.api5xxPercent}% or more of requests in 5 minutes`,
      api5xxRate,
      ALARM_BOUNDS.api5xxPercent,
      quiet,
    );
    if (props.accessLogs !== undefined) {
      // Counted from the access log: API Gateway's own 4XXError mixes 403 with every other 4xx.
      const fromAccessLog = (metricName: string, pattern: string): Metric =>
        new MetricFilter(this, `${metricName}Filter`, {
          logGroup: props.accessLogs as ILogGroup,
          metricNamespace: TRANSFERS_STUCK_METRIC.namespace,
          metricName,
          filterPattern: FilterPattern.literal(pattern),
          metricValue: '1',
          dimensions: { stage: '$.stage' },
        }).metric({ statistic: 'Sum', period: fiveMinutes, dimensionsMap: { stage: props.stageName } });
      const authenticated = '($.clientId != "-") && ($.clientId != "")';
      const forbiddenRate = new MathExpression({
        expression: `IF(calls >= ${ALARM_BOUNDS.forbiddenMinimumCalls}, 100 * forbidden / calls, 0)`,
        usingMetrics: {
          calls: fromAccessLog(AUTHENTICATED_CALLS_METRIC, `{ ${authenticated} }`),
          forbidden: fromAccessLog(
            AUTHENTICATED_FORBIDDEN_METRIC,
            `{ ${authenticated} && ($.status = "403") }`,
          ),
        },
        label: 'Authenticated calls answered 403 (%)',
        period: fiveMinutes,
      });
      alarm(
        'AuthenticatedForbiddenRate',
        'page',
        `${ALARM_BOUNDS.authenticatedForbiddenPercent}% or more of authenticated calls answered 403 in 5 minutes (a tenant not admitted to a usage plan, or wrong scopes)`,
        forbiddenRate,
        ALARM_BOUNDS.authenticatedForbiddenPercent,
        quiet,
      );
    }
    const latency = props.stage.metricLatency({ statistic: 'p99', period: fiveMinutes });
    alarm(
      'ApiP99Latency',
      'ticket',
      `API p99 latency at or above ${ALARM_BOUNDS.apiP99LatencyMs} ms for 15 minutes`,
      latency,
      ALARM_BOUNDS.apiP99LatencyMs,
      quiet,
      { evaluationPeriods: 3 },
    );

    // The authorizer's errors refuse every client at once (500 AUTHORIZER_FAILURE): its own alarm.
    alarm(
      'AuthorizerErrors',
      'page',
      'The token authorizer failed (clients get 500 AUTHORIZER_FAILURE)',
      props.authorizer.metricErrors({ period: Duration.minutes(1) }),
      1,
      quiet,
    );
    for (const [name, fn] of props.functions) {
      if (fn === props.authorizer) continue;
      alarm(
        `${name}Errors`,
        'ticket',
        `Function ${name} failed`,
        fn.metricErrors({ period: fiveMinutes }),
        1,
        quiet,
      );
    }
    // Throttles in groups of ten functions, one alarm a group (a metric math alarm takes ten
    // metrics at most): the stack stays within CloudFormation's 500 resources, and the alarm's
    // description names its functions.
    const throttled = [...props.functions];
    for (let group = 0; group * THROTTLE_GROUP_SIZE < throttled.length; group++) {
      const members = throttled.slice(group * THROTTLE_GROUP_SIZE, (group + 1) * THROTTLE_GROUP_SIZE);
      const usingMetrics = Object.fromEntries(
        members.map(([, fn], index) => [`t${index}`, fn.metricThrottles({ period: fiveMinutes })]),
      );
      alarm(
        `FunctionThrottles${group + 1}`,
        'ticket',
        `A function was throttled: ${members.map(([name]) => name).join(', ')}`,
        new MathExpression({
          expression: Object.keys(usingMetrics).join(' + '),
          usingMetrics,
          label: `Throttles of functions ${group * THROTTLE_GROUP_SIZE + 1}-${group * THROTTLE_GROUP_SIZE + members.length}`,
          period: fiveMinutes,
        }),
        1,
        quiet,
      );
    }
    for (const [name, fn] of props.functions) {
      const timeout = (fn.timeout ?? Duration.seconds(3)).toMilliseconds();
      const bound = Math.round((timeout * ALARM_BOUNDS.functionDurationPercentOfTimeout) / 100);
      alarm(
        `${name}NearTimeout`,
        'ticket',
        `Function ${name}: p99 duration at or above ${bound} ms of its ${timeout} ms timeout`,
        fn.metricDuration({ statistic: 'p99', period: fiveMinutes }),
        bound,
        quiet,
      );
    }

    // The heartbeat: the schedule invokes the reconciler every period, so a period without an
    // invocation (no data at all) is the reconciler stopping, and breaches. Two in a row, so one
    // late run is no page.
    alarm(
      'ReconcilerNotInvoked',
      'page',
      `The reconciler was not invoked for two schedule periods (${props.reconciler.every.toMinutes()} minutes each)`,
      props.reconciler.function.metricInvocations({ statistic: 'Sum', period: props.reconciler.every }),
      1,
      TreatMissingData.BREACHING,
      { evaluationPeriods: 2, below: true },
    );

    // A reconciler invoked on schedule that fails on every run drives nothing on: stalled
    // transfers stay stalled. One failed run is a ticket (ReconcilerErrors); a failure in each of
    // RECONCILER_FAILING_PERIODS schedule periods in a row pages.
    alarm(
      'ReconcilerFailing',
      'page',
      `The reconciler failed in each of ${RECONCILER_FAILING_PERIODS} schedule periods in a row (${props.reconciler.every.toMinutes()} minutes each): stalled transfers are not driven on`,
      props.reconciler.function.metricErrors({ statistic: 'Sum', period: props.reconciler.every }),
      1,
      quiet,
      { evaluationPeriods: RECONCILER_FAILING_PERIODS },
    );

    // Both machines' executions in one alarm each (one metric per machine, no alarm more).
    const executions = (metricOf: (machine: StateMachine) => IMetric): IMetric =>
      props.longWaits === undefined
        ? metricOf(props.stateMachine)
        : new MathExpression({
            expression: 'SUM([fastPath, longWaits])',
            usingMetrics: { fastPath: metricOf(props.stateMachine), longWaits: metricOf(props.longWaits) },
            period: fiveMinutes,
          });
    alarm(
      'WorkflowExecutionsFailed',
      'ticket',
      'Lifecycle executions failed',
      executions((machine) => machine.metricFailed({ period: fiveMinutes })),
      1,
      quiet,
    );
    alarm(
      'WorkflowExecutionsTimedOut',
      'ticket',
      'Lifecycle executions timed out',
      executions((machine) => machine.metricTimedOut({ period: fiveMinutes })),
      1,
      quiet,
    );
    // Nothing aborts an execution but a person (StopExecution) or a redeployment gone wrong.
    alarm(
      'WorkflowExecutionsAborted',
      'ticket',
      'Lifecycle executions aborted',
      executions((machine) => machine.metricAborted({ period: fiveMinutes })),
      1,
      quiet,
    );
    alarm(
      'WorkflowExecutionsThrottled',
      'ticket',
      'Lifecycle execution starts or state transitions throttled',
      executions((machine) => machine.metricThrottled({ period: fiveMinutes })),
      1,
      quiet,
    );
    const stuck = new Metric({
      namespace: TRANSFERS_STUCK_METRIC.namespace,
      metricName: TRANSFERS_STUCK_METRIC.name,
      dimensionsMap: { service: TRANSFERS_STUCK_METRIC.service, stage: props.stageName },
      statistic: 'Maximum',
      period: Duration.minutes(15),
    });
    // The reconciler emits it on every run it completes, so no data is a reconciler that stopped
    // or fails before it counts: nobody knows how many transfers are stuck, which breaches.
    alarm(
      'TransfersStuck',
      'page',
      'Credit transfers not final past their bound, or the reconciler did not count them (reconciler)',
      stuck,
      1,
      TreatMissingData.BREACHING,
    );
    // The bank's connector answers nothing: recovery pauses (nothing parked, no attempt counted)
    // and this is the outage's one page, clear once a run's probe is answered again.
    alarm(
      'RailUnavailable',
      'page',
      "The rail (the bank's connector) answers nothing: recovery paused until it does (reconciler's probe)",
      new Metric({
        namespace: TRANSFERS_STUCK_METRIC.namespace,
        metricName: RAIL_UNAVAILABLE_METRIC,
        dimensionsMap: { service: TRANSFERS_STUCK_METRIC.service, stage: props.stageName },
        statistic: 'Maximum',
        period: Duration.minutes(15),
      }),
      1,
      quiet,
    );
    // Raised while any transfer is parked, so it pages once and clears when the last is resolved.
    const parked = new Metric({
      namespace: TRANSFERS_STUCK_METRIC.namespace,
      metricName: PARKED_TRANSFERS_METRIC,
      dimensionsMap: { service: TRANSFERS_STUCK_METRIC.service, stage: props.stageName },
      statistic: 'Maximum',
      period: Duration.minutes(15),
    });
    alarm(
      'TransfersParked',
      'page',
      'Credit transfers parked for an operator after failing every attempt (npm run transfers -- parked)',
      parked,
      1,
      quiet,
    );

    const tableThrottles = new MathExpression({
      expression: 'reads + writes',
      usingMetrics: {
        reads: props.table.metric('ReadThrottleEvents', { statistic: 'Sum', period: fiveMinutes }),
        writes: props.table.metric('WriteThrottleEvents', { statistic: 'Sum', period: fiveMinutes }),
      },
      label: 'Table throttle events',
      period: fiveMinutes,
    });
    alarm(
      'TableThrottles',
      'ticket',
      'DynamoDB throttled reads or writes of the table',
      tableThrottles,
      1,
      quiet,
    );

    for (const [name, queue] of props.deadLetterQueues) {
      alarm(
        `${name}Depth`,
        'page',
        `Messages in dead-letter queue ${name}`,
        queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: fiveMinutes }),
        1,
        // SQS stops reporting an empty queue after hours without activity.
        quiet,
      );
    }
    for (const [name, { queue, oldestMessageBound, severity }] of props.queueAges) {
      alarm(
        `${name}OldestMessage`,
        severity ?? 'ticket',
        `The oldest message of queue ${name} is ${oldestMessageBound.toHumanString()} old or older`,
        queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: fiveMinutes }),
        oldestMessageBound.toSeconds(),
        quiet,
      );
    }
    let wafBlocked: IMetric | undefined;
    if (props.webAclName !== undefined) {
      wafBlocked = new Metric({
        namespace: 'AWS/WAFV2',
        metricName: 'BlockedRequests',
        dimensionsMap: { WebACL: props.webAclName, Region: Aws.REGION, Rule: 'ALL' },
        statistic: 'Sum',
        period: fiveMinutes,
      });
      alarm(
        'WafBlocksSurge',
        'ticket',
        `WAF blocked ${ALARM_BOUNDS.wafBlockedRequests} or more requests in 5 minutes`,
        wafBlocked,
        ALARM_BOUNDS.wafBlockedRequests,
        quiet,
      );
    }

    for (const [name, { description, metric, severity }] of props.countAlarms ?? [])
      alarm(name, severity ?? 'ticket', description, metric, 1, quiet);

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${props.name}-${Aws.REGION}`,
      defaultInterval: Duration.hours(6),
    });
    this.dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 6 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'API requests and 5xx %', left: [requests], right: [api5xxRate], width: 8 }),
      new GraphWidget({ title: 'API p99 latency (ms)', left: [latency], width: 8 }),
      new GraphWidget({
        title: 'Lifecycle executions',
        left: [
          props.stateMachine.metricStarted({ period: fiveMinutes }),
          props.stateMachine.metricSucceeded({ period: fiveMinutes }),
          props.stateMachine.metricFailed({ period: fiveMinutes }),
          props.stateMachine.metricTimedOut({ period: fiveMinutes }),
        ],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Function errors',
        left: [...props.functions].map(([name, fn]) => fn.metricErrors({ period: fiveMinutes, label: name })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Function throttles',
        left: [...props.functions].map(([name, fn]) =>
          fn.metricThrottles({ period: fiveMinutes, label: name }),
        ),
        width: 8,
      }),
      new GraphWidget({
        title: 'Transfers stuck, table throttles, WAF blocks, dead letters',
        left: [stuck, parked, tableThrottles, ...(wafBlocked ? [wafBlocked] : [])],
        right: [...props.deadLetterQueues].map(([name, queue]) =>
          queue.metricApproximateNumberOfMessagesVisible({
            statistic: 'Maximum',
            period: fiveMinutes,
            label: name,
          }),
        ),
        width: 8,
      }),
    );
  }

  /**
   * Pages on a call that could stop every payment or hand a key to someone: `ScheduleKeyDeletion`,
   * `DisableKey` or `PutKeyPolicy` on one of the keys, as CloudTrail records it (management
   * events, delivered to EventBridge when the account has a trail: docs/operations.md). The
   * deployment's own `PutKeyPolicy` pages too: a key policy changes only with a reviewed deploy.
   */
  pageOnKeyChanges(keys: readonly IKey[]): Rule {
    const rule = new Rule(this, 'KeyChanges', {
      description:
        'PAGE: a KMS key of the stage was scheduled for deletion, disabled or given a new policy (docs/operations.md, alarm KeyChanges)',
      eventPattern: {
        source: ['aws.kms'],
        detailType: ['AWS API Call via CloudTrail'],
        detail: {
          eventSource: ['kms.amazonaws.com'],
          eventName: [...PAGED_KEY_CALLS],
          resources: { ARN: keys.map((key) => key.keyArn) },
        },
      },
    });
    // Not the SnsTopic target: it lets any rule anywhere publish; this topic takes only this rule.
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'KeyChangesPublish',
        principals: [new ServicePrincipal('events.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: { ArnEquals: { 'aws:SourceArn': rule.ruleArn } },
      }),
    );
    const topicArns = [
      this.topic.topicArn,
      ...(this.alarmTopicArn === undefined ? [] : [this.alarmTopicArn]),
    ];
    // The team's paging topic must let this rule publish, as it lets the alarms (docs/operations.md).
    for (const arn of topicArns) rule.addTarget({ bind: () => ({ arn }) });
    this.severities.set('KeyChanges', 'page');
    return rule;
  }
}
