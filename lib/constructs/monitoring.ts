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
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { TRANSFERS_STUCK_METRIC } from './lifecycle-workflow.ts';

export interface MonitoringProps {
  /** Names the dashboard, unique per account (dashboards are global). */
  readonly name: string;
  readonly stage: Stage;
  /** Every function of the stack, by a readable name. */
  readonly functions: ReadonlyMap<string, IFunction>;
  readonly authorizer: IFunction;
  readonly stateMachine: StateMachine;
  readonly table: Table;
  /** Dead-letter queues, by a readable name: any message in one is an alarm. */
  readonly deadLetterQueues: ReadonlyMap<string, IQueue>;
  /** Counts, by a readable name, of which any is an alarm (e.g. webhook endpoints disabled). */
  readonly countAlarms?: ReadonlyMap<string, { description: string; metric: IMetric }>;
  readonly alarmEmail?: string;
}

/** Bounds of the alarms; each is a judgement to revisit with real traffic (docs/decisions.md). */
export const ALARM_BOUNDS = {
  /** Percent of requests answered 5xx over five minutes. */
  api5xxPercent: 1,
  /** p99 latency of the API, milliseconds, three five-minute periods in a row. */
  apiP99LatencyMs: 2500,
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

    const key = new Key(this, 'TopicKey', {
      description: 'Encrypts the credit transfer alarm topic',
      enableKeyRotation: true,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: alarmsOfThisAccount,
      }),
    );
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
    const action = new SnsAction(this.topic);

    const alarm = (
      alarmId: string,
      description: string,
      metric: IMetric,
      threshold: number,
      options: { evaluationPeriods?: number; missing?: TreatMissingData; below?: boolean } = {},
    ): Alarm => {
      const created = new Alarm(this, alarmId, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: options.evaluationPeriods ?? 1,
        comparisonOperator: options.below
          ? ComparisonOperator.LESS_THAN_THRESHOLD
          : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: options.missing ?? TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };
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
    );
    const latency = props.stage.metricLatency({ statistic: 'p99', period: fiveMinutes });
    alarm(
      'ApiP99Latency',
      `API p99 latency at or above ${ALARM_BOUNDS.apiP99LatencyMs} ms for 15 minutes`,
      latency,
      ALARM_BOUNDS.apiP99LatencyMs,
      {
        evaluationPeriods: 3,
      },
    );

    // The authorizer's errors refuse every client at once (500 AUTHORIZER_FAILURE): its own alarm.
    alarm(
      'AuthorizerErrors',
      'The token authorizer failed (clients get 500 AUTHORIZER_FAILURE)',
      props.authorizer.metricErrors({ period: Duration.minutes(1) }),
      1,
    );
    for (const [name, fn] of props.functions) {
      if (fn === props.authorizer) continue;
      alarm(`${name}Errors`, `Function ${name} failed`, fn.metricErrors({ period: fiveMinutes }), 1);
    }
    for (const [name, fn] of props.functions) {
      alarm(
        `${name}Throttles`,
        `Function ${name} was throttled`,
        fn.metricThrottles({ period: fiveMinutes }),
        1,
      );
    }

    alarm(
      'WorkflowExecutionsFailed',
      'Lifecycle executions failed',
      props.stateMachine.metricFailed({ period: fiveMinutes }),
      1,
    );
    alarm(
      'WorkflowExecutionsTimedOut',
      'Lifecycle executions timed out',
      props.stateMachine.metricTimedOut({ period: fiveMinutes }),
      1,
    );
    const stuck = new Metric({
      namespace: TRANSFERS_STUCK_METRIC.namespace,
      metricName: TRANSFERS_STUCK_METRIC.name,
      dimensionsMap: { service: TRANSFERS_STUCK_METRIC.service },
      statistic: 'Maximum',
      period: Duration.minutes(15),
    });
    alarm('TransfersStuck', 'Credit transfers not final past their bound (reconciler)', stuck, 1);

    const tableThrottles = new MathExpression({
      expression: 'reads + writes',
      usingMetrics: {
        reads: props.table.metric('ReadThrottleEvents', { statistic: 'Sum', period: fiveMinutes }),
        writes: props.table.metric('WriteThrottleEvents', { statistic: 'Sum', period: fiveMinutes }),
      },
      label: 'Table throttle events',
      period: fiveMinutes,
    });
    alarm('TableThrottles', 'DynamoDB throttled reads or writes of the table', tableThrottles, 1);

    for (const [name, queue] of props.deadLetterQueues) {
      alarm(
        `${name}Depth`,
        `Messages in dead-letter queue ${name}`,
        queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: fiveMinutes }),
        1,
      );
    }

    for (const [name, { description, metric }] of props.countAlarms ?? [])
      alarm(name, description, metric, 1);

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
        title: 'Transfers stuck, table throttles, dead letters',
        left: [stuck, tableThrottles],
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
