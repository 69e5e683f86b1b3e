import { Duration, Validations } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IEventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Tracing } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { WEBHOOK_INDEX } from '#adapters/table/table-definition';
import { SERVICE_NAME } from '#shared/logger';
import {
  METRICS_NAMESPACE,
  STATUS_EVENTS_FORGED_METRIC,
  WEBHOOK_ENDPOINTS_DISABLED_METRIC,
} from '#shared/metrics';
import { KEY_PREFIXES, tableAccess, webhookSecretOpening, webhookWakeUps } from '../function-bindings.ts';
import { bind, ServiceFunction } from './function-defaults.ts';
import { addStatusChangeQueue } from './status-change-queue.ts';
import type { WebhookSecretKey } from './webhook-secret-key.ts';

export interface WebhookDeliveryProps {
  readonly eventBus: IEventBus;
  readonly table: ITable;
  /** The key the endpoints' signing secrets are sealed under: both functions sign deliveries. */
  readonly secretKey: WebhookSecretKey;
  readonly logRetention?: RetentionDays;
  /** The stage: a dimension of the service's metrics, so each stage's alarm watches its own. */
  readonly stageName: string;
}

/** The function that records status events and makes the first attempts; its timeout bounds a batch. */
const INGEST_TIMEOUT = Duration.seconds(60);

/**
 * Webhook delivery on AWS. A rule copies every status change from the bus into a queue; the
 * ingest function records each (the event kept for the events API with a TTL, a delivery queued
 * per endpoint, in the table) before the message is acknowledged, reports failed messages alone
 * (partial batch failures) and tries the new deliveries at once. Retries wait in the table, not
 * in a function: each retry also puts a wake-up on a queue, held back by SQS until the retry is due,
 * and the wake-up starts the delivery function, which sends what is due and stops. The same
 * function runs once a minute as well and finds what no wake-up announced (a claim a dead function
 * left, a wake-up that could not be sent), so none is lost; nothing polls the table every second.
 */
export class WebhookDelivery extends Construct {
  readonly queue: Queue;
  readonly queueDeadLetters: Queue;
  readonly ruleDeadLetters: Queue;
  readonly rule: Rule;
  readonly ingestFunction: ServiceFunction;
  readonly deliverFunction: ServiceFunction;
  readonly schedule: Rule;
  /** Wake-ups of the delivery function, each held back until its retry is due. */
  readonly wakeUps: Queue;
  /** Endpoints disabled (410 Gone, or failing for three days): alarmed by the stack's monitoring. */
  readonly endpointsDisabled: Metric;
  /** Status events dropped as no change of a stored transfer (someone put them on the bus): alarmed. */
  readonly forgedStatusEvents: Metric;

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);

    const statusChanges = addStatusChangeQueue(this, {
      eventBus: props.eventBus,
      readBy: 'the webhook delivery queue',
      // Six times the function's timeout, as Lambda advises for a queue it reads.
      visibilityTimeout: Duration.seconds(INGEST_TIMEOUT.toSeconds() * 6),
      deadLetterReason:
        'This queue is itself a dead-letter queue (of the webhook queue, or of its rule target); its depth and its oldest message are alarmed.',
      // One tenant's burst of status changes must not hold back another tenant's webhooks.
      fairByTenant: true,
    });
    this.queue = statusChanges.queue;
    this.queueDeadLetters = statusChanges.queueDeadLetters;
    this.ruleDeadLetters = statusChanges.ruleDeadLetters;
    this.rule = statusChanges.rule;

    const metricsEnvironment = {
      environment: { POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE, POWERTOOLS_SERVICE_NAME: SERVICE_NAME },
    };
    // Both try deliveries: they read an endpoint, mark it failing or disabled, and record the
    // delivery and its attempts.
    const attempts = [
      tableAccess(props.table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.webhookEndpoints]),
      tableAccess(props.table, ['PutItem', 'UpdateItem'], [KEY_PREFIXES.deliveries]),
    ];

    this.ingestFunction = new ServiceFunction(this, 'IngestFunction', {
      entry: 'lambdas/webhooks/ingest-status-events.ts',
      description: 'Webhooks: records status events and queues their deliveries, then tries them',
      timeout: INGEST_TIMEOUT,
      // Traced only as part of a sampled caller's trace: with ACTIVE, Lambda's own rule started a
      // trace for its queue's invocations that no sampling rule of the stage governs.
      tracing: Tracing.PASS_THROUGH,
      ...(props.logRetention !== undefined && { logRetention: props.logRetention }),
    });
    const signing = webhookSecretOpening(props.secretKey);
    bind(
      this.ingestFunction.function,
      ...attempts,
      // Lists a tenant's endpoints to queue a delivery to each.
      tableAccess(props.table, ['Query'], [KEY_PREFIXES.webhookEndpoints]),
      // Records the events; reads the transfer each status event is checked against.
      tableAccess(props.table, ['GetItem', 'PutItem'], [KEY_PREFIXES.events]),
      // Whether a kept event's first deliveries were made: their first attempts, or queued deliveries.
      tableAccess(props.table, ['GetItem'], [KEY_PREFIXES.deliveries]),
      tableAccess(props.table, ['GetItem'], [KEY_PREFIXES.creditTransfers]),
      // The batch each batch completion is checked against and described from.
      tableAccess(props.table, ['GetItem'], [KEY_PREFIXES.batches]),
      metricsEnvironment,
      signing,
    );
    this.ingestFunction.function.addEventSource(
      new SqsEventSource(this.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 20 }),
    );

    this.deliverFunction = new ServiceFunction(this, 'DeliverFunction', {
      entry: 'lambdas/webhooks/deliver-due-webhooks.ts',
      description: 'Webhooks: sends the deliveries that are due (retries)',
      timeout: Duration.seconds(75),
      ...(props.logRetention !== undefined && { logRetention: props.logRetention }),
    });
    // Reads the events it sends; records none.
    bind(
      this.deliverFunction.function,
      ...attempts,
      // The queue of due deliveries, through its index.
      tableAccess(props.table, ['Query'], [KEY_PREFIXES.webhookDue], [WEBHOOK_INDEX.indexName]),
      tableAccess(props.table, ['GetItem'], [KEY_PREFIXES.events]),
      metricsEnvironment,
      signing,
    );

    // A wake-up only says "look now": losing one delays a retry to the next minute's run, so it
    // needs no dead-letter queue of its own.
    this.wakeUps = new Queue(this, 'WakeUps', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(1),
      visibilityTimeout: Duration.seconds(75 * 6),
    });
    const wakeUpReason =
      'Its messages only wake the retry sender when a retry is due; the retry itself waits in the table, and the sender runs every minute besides, so a message lost or dropped delays a retry by a minute at most.';
    Validations.of(this.wakeUps).acknowledge(
      { id: 'AwsSolutions-SQS3', reason: wakeUpReason },
      { id: 'cdk-validator-cfnguard::sqs_dlq_check', reason: wakeUpReason },
    );
    const wakeUpBinding = webhookWakeUps(this.wakeUps);
    // Both make attempts, so both may schedule a retry; the sender also sends on a wake-up still early.
    bind(this.ingestFunction.function, wakeUpBinding);
    bind(this.deliverFunction.function, wakeUpBinding);
    this.deliverFunction.function.addEventSource(
      new SqsEventSource(this.wakeUps, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(1),
        maxConcurrency: 2,
      }),
    );
    this.schedule = new Rule(this, 'DeliverySchedule', {
      description: 'Starts the webhook retry sender every minute, for what no wake-up announced',
      schedule: Schedule.rate(Duration.minutes(1)),
    });
    this.schedule.addTarget(new LambdaFunction(this.deliverFunction.function, { retryAttempts: 2 }));

    const count = (metricName: string) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: SERVICE_NAME, stage: props.stageName },
        statistic: 'Sum',
        period: Duration.minutes(5),
      });
    this.endpointsDisabled = count(WEBHOOK_ENDPOINTS_DISABLED_METRIC);
    this.forgedStatusEvents = count(STATUS_EVENTS_FORGED_METRIC);
  }
}
