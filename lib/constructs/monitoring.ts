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
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { keyPolicy } from './key-policy.ts';
import { TRANSFERS_STUCK_METRIC } from './lifecycle-workflow.ts';

export interface MonitoringProps {
  /** Names the dashboard, unique per account (dashboards are global). */
  readonly name: string;
  readonly stage: Stage;
  /** The stage's name: the `stage` dimension of the service's own metrics. */
  readonly stageName: string;
  /** Every function of the stack, by a readable name. */
  readonly functions: ReadonlyMap<string, LambdaFunction>;
  readonly authorizer: LambdaFunction;
  /** The reconciler and how often its schedule runs it: its heartbeat. */
  readonly reconciler: { readonly function: LambdaFunction; readonly every: Duration };
  readonly stateMachine: StateMachine;
  readonly table: Table;
  /** Dead-letter queues, by a readable name: any message in one is an alarm. */
  readonly deadLetterQueues: ReadonlyMap<string, IQueue>;
  /** Counts, by a readable name, of which any is an alarm (e.g. webhook endpoints disabled). */
  readonly countAlarms?: ReadonlyMap<string, { description: string; metric: IMetric }>;
  /** Every queue (dead-letter queues too), with the age its oldest message may reach. */
  readonly queueAges: ReadonlyMap<string, { readonly queue: IQueue; readonly oldestMessageBound: Duration }>;
  /** The web ACL's name, when there is one: its blocked requests. */
  readonly webAclName?: string;
  readonly alarmEmail?: string;
  /** An existing topic the alarms notify as well. */
  readonly alarmTopicArn?: string;
}

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
} as const;

/**
 * Alarms on everything that means money stops moving or clients are refused, all to one
 * KMS-encrypted SNS topic (mailed to `alarmEmail` when given), and one dashboard with them.
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
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

    // Only CloudWatch alarms use the key; the account only administers it.
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
      ),
    });
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: `Credit transfers ${props.name} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: alarmsOfThisAccount,
      }),
    );
    if (props.alarmEmail !== undefined) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    const topics: ITopic[] = [
      this.topic,
      ...(props.alarmTopicArn === undefined
        ? []
        : [Topic.fromTopicArn(this, 'SubscriberTopic', props.alarmTopicArn)]),
    ];
    const actions = topics.map((topic) => new SnsAction(topic));

    /**
     * Every alarm states what missing data means: NOT_BREACHING where no data means nothing
     * happened (no requests, no errors, no messages), BREACHING where it means something that
     * should happen did not.
     */
    const alarm = (
      alarmId: string,
      description: string,
      metric: IMetric,
      threshold: number,
      missing: TreatMissingData,
      options: { evaluationPeriods?: number; below?: boolean } = {},
    ): Alarm => {
      const created = new Alarm(this, alarmId, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: options.evaluationPeriods ?? 1,
        comparisonOperator: options.below
          ? ComparisonOperator.LESS_THAN_THRESHOLD
          : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: missing,
      });
      created.addAlarmAction(...actions);
      created.addOkAction(...actions);
      this.alarms.push(created);
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
      `API answered 5xx to ${ALARM_BOUNDS.api5xxPercent}% or more of requests in 5 minutes`,
      api5xxRate,
      ALARM_BOUNDS.api5xxPercent,
      quiet,
    );
    const latency = props.stage.metricLatency({ statistic: 'p99', period: fiveMinutes });
    alarm(
      'ApiP99Latency',
      `API p99 latency at or above ${ALARM_BOUNDS.apiP99LatencyMs} ms for 15 minutes`,
      latency,
      ALARM_BOUNDS.apiP99LatencyMs,
      quiet,
      { evaluationPeriods: 3 },
    );

    // The authorizer's errors refuse every client at once (500 AUTHORIZER_FAILURE): its own alarm.
    alarm(
      'AuthorizerErrors',
      'The token authorizer failed (clients get 500 AUTHORIZER_FAILURE)',
      props.authorizer.metricErrors({ period: Duration.minutes(1) }),
      1,
      quiet,
    );
    for (const [name, fn] of props.functions) {
      if (fn === props.authorizer) continue;
      alarm(`${name}Errors`, `Function ${name} failed`, fn.metricErrors({ period: fiveMinutes }), 1, quiet);
    }
    for (const [name, fn] of props.functions) {
      alarm(
        `${name}Throttles`,
        `Function ${name} was throttled`,
        fn.metricThrottles({ period: fiveMinutes }),
        1,
        quiet,
      );
    }
    for (const [name, fn] of props.functions) {
      const timeout = (fn.timeout ?? Duration.seconds(3)).toMilliseconds();
      const bound = Math.round((timeout * ALARM_BOUNDS.functionDurationPercentOfTimeout) / 100);
      alarm(
        `${name}NearTimeout`,
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
      `The reconciler was not invoked for two schedule periods (${props.reconciler.every.toMinutes()} minutes each)`,
      props.reconciler.function.metricInvocations({ statistic: 'Sum', period: props.reconciler.every }),
      1,
      TreatMissingData.BREACHING,
      { evaluationPeriods: 2, below: true },
    );

    alarm(
      'WorkflowExecutionsFailed',
      'Lifecycle executions failed',
      props.stateMachine.metricFailed({ period: fiveMinutes }),
      1,
      quiet,
    );
    alarm(
      'WorkflowExecutionsTimedOut',
      'Lifecycle executions timed out',
      props.stateMachine.metricTimedOut({ period: fiveMinutes }),
      1,
      quiet,
    );
    // Nothing aborts an execution but a person (StopExecution) or a redeployment gone wrong.
    alarm(
      'WorkflowExecutionsAborted',
      'Lifecycle executions aborted',
      props.stateMachine.metricAborted({ period: fiveMinutes }),
      1,
      quiet,
    );
    alarm(
      'WorkflowExecutionsThrottled',
      'Lifecycle execution starts or state transitions throttled',
      props.stateMachine.metricThrottled({ period: fiveMinutes }),
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
    // The reconciler emits it every run; its absence is the heartbeat's alarm, not this one's.
    alarm('TransfersStuck', 'Credit transfers not final past their bound (reconciler)', stuck, 1, quiet);

    const tableThrottles = new MathExpression({
      expression: 'reads + writes',
      usingMetrics: {
        reads: props.table.metric('ReadThrottleEvents', { statistic: 'Sum', period: fiveMinutes }),
        writes: props.table.metric('WriteThrottleEvents', { statistic: 'Sum', period: fiveMinutes }),
      },
      label: 'Table throttle events',
      period: fiveMinutes,
    });
    alarm('TableThrottles', 'DynamoDB throttled reads or writes of the table', tableThrottles, 1, quiet);

    for (const [name, queue] of props.deadLetterQueues) {
      alarm(
        `${name}Depth`,
        `Messages in dead-letter queue ${name}`,
        queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: fiveMinutes }),
        1,
        // SQS stops reporting an empty queue after hours without activity.
        quiet,
      );
    }
    for (const [name, { queue, oldestMessageBound }] of props.queueAges) {
      alarm(
        `${name}OldestMessage`,
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
        `WAF blocked ${ALARM_BOUNDS.wafBlockedRequests} or more requests in 5 minutes`,
        wafBlocked,
        ALARM_BOUNDS.wafBlockedRequests,
        quiet,
      );
    }

    for (const [name, { description, metric }] of props.countAlarms ?? [])
      alarm(name, description, metric, 1, quiet);

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
        left: [stuck, tableThrottles, ...(wafBlocked ? [wafBlocked] : [])],
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
}
