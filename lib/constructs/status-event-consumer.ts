import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { type IEventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { EVENT_SOURCE } from '#adapters/event-publisher';
import { STATUS_CHANGED_EVENT } from '#domain/lifecycle';

export interface StatusEventConsumerProps {
  readonly eventBus: IEventBus;
}

/**
 * The example consumer of the status events: a rule that copies every status change into an SQS
 * queue a downstream system reads at its own pace. Nothing is lost on the way: what EventBridge
 * cannot deliver lands in the rule's dead-letter queue, what the reader fails five times in the
 * queue's own.
 */
export class StatusEventConsumer extends Construct {
  readonly queue: Queue;
  /** Messages the reader failed to process. */
  readonly queueDeadLetters: Queue;
  /** Events EventBridge could not deliver to the queue. */
  readonly ruleDeadLetters: Queue;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: StatusEventConsumerProps) {
    super(scope, id);

    // SQS managed encryption: EventBridge can deliver to it without a key policy of its own.
    const queueProps = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
    // Retained when the stage is torn down: what they hold was never delivered anywhere else.
    this.queueDeadLetters = new Queue(this, 'QueueDeadLetters', {
      ...queueProps,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.queue = new Queue(this, 'Queue', {
      ...queueProps,
      retentionPeriod: Duration.days(4),
      visibilityTimeout: Duration.seconds(60),
      deadLetterQueue: { queue: this.queueDeadLetters, maxReceiveCount: 5 },
    });
    this.ruleDeadLetters = new Queue(this, 'RuleDeadLetters', {
      ...queueProps,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.rule = new Rule(this, 'StatusChanged', {
      eventBus: props.eventBus,
      description: 'Every credit transfer status change, to the example consumer queue',
      eventPattern: { source: [EVENT_SOURCE], detailType: [STATUS_CHANGED_EVENT] },
    });
    this.rule.addTarget(
      new SqsQueue(this.queue, {
        deadLetterQueue: this.ruleDeadLetters,
        retryAttempts: 185,
        maxEventAge: Duration.hours(24),
      }),
    );

    for (const deadLetters of [this.queueDeadLetters, this.ruleDeadLetters]) {
      const reason =
        'This queue is itself a dead-letter queue (of the consumer queue, or of the EventBridge rule target); its depth and its oldest message are alarmed.';
      Validations.of(deadLetters).acknowledge(
        { id: 'AwsSolutions-SQS3', reason },
        { id: 'cdk-validator-cfnguard::sqs_dlq_check', reason },
      );
    }
  }
}
