import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { EventField, type IEventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { BATCH_COMPLETED_EVENT, EVENT_SOURCE } from '#adapters/credit-transfers/event-publisher';
import { STATUS_CHANGED_EVENT } from '#domain/credit-transfers/lifecycle';

export interface StatusChangeQueueProps {
  readonly eventBus: IEventBus;
  /** Who reads the queue, as the rule's description names it ("the webhook delivery queue"). */
  readonly readBy: string;
  /** How long a message received stays hidden from other readers. */
  readonly visibilityTimeout: Duration;
  /** Why the two dead-letter queues have none of their own, for the policy checks. */
  readonly deadLetterReason: string;
  /**
   * Each event's tenant as its message group (SQS fair queues on a standard queue): a tenant's
   * flood then waits behind another tenant's first event rather than ahead of it.
   * @default false: no message group
   */
  readonly fairByTenant?: boolean;
}

export interface StatusChangeQueue {
  readonly queue: Queue;
  /** Messages the reader failed five times. */
  readonly queueDeadLetters: Queue;
  /** Events EventBridge could not deliver to the queue. */
  readonly ruleDeadLetters: Queue;
  readonly rule: Rule;
}

/** Where both events the rule copies carry their tenant (StatusChangedEvent, BatchCompletedEvent). */
export const TENANT_PATH = '$.detail.tenant';

/**
 * A rule that copies every status change from the bus into an SQS queue, and the dead-letter
 * queues that keep what goes wrong on the way: nothing is lost. Made in `scope` under fixed ids,
 * so the queues of a deployed stack keep their logical ids (a new id would replace a queue and
 * drop the messages in it).
 */
export const addStatusChangeQueue = (scope: Construct, props: StatusChangeQueueProps): StatusChangeQueue => {
  // SQS managed encryption: EventBridge can deliver to it without a key policy of its own.
  const queueProps = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
  // Retained when the stage is torn down: what they hold was never delivered anywhere else.
  const deadLetterProps = {
    ...queueProps,
    retentionPeriod: Duration.days(14),
    removalPolicy: RemovalPolicy.RETAIN,
  };
  const queueDeadLetters = new Queue(scope, 'QueueDeadLetters', deadLetterProps);
  const queue = new Queue(scope, 'Queue', {
    ...queueProps,
    retentionPeriod: Duration.days(4),
    visibilityTimeout: props.visibilityTimeout,
    deadLetterQueue: { queue: queueDeadLetters, maxReceiveCount: 5 },
  });
  const ruleDeadLetters = new Queue(scope, 'RuleDeadLetters', deadLetterProps);
  for (const deadLetters of [queueDeadLetters, ruleDeadLetters]) {
    Validations.of(deadLetters).acknowledge(
      { id: 'AwsSolutions-SQS3', reason: props.deadLetterReason },
      { id: 'cdk-validator-cfnguard::sqs_dlq_check', reason: props.deadLetterReason },
    );
  }

  const rule = new Rule(scope, 'StatusChanged', {
    eventBus: props.eventBus,
    description: `Every credit transfer status change, to ${props.readBy}`,
    eventPattern: { source: [EVENT_SOURCE], detailType: [STATUS_CHANGED_EVENT, BATCH_COMPLETED_EVENT] },
  });
  rule.addTarget(
    new SqsQueue(queue, {
      // A dynamic path: EventBridge sets the group from each event (every event has detail.tenant).
      ...(props.fairByTenant === true && { messageGroupId: EventField.fromPath(TENANT_PATH) }),
      deadLetterQueue: ruleDeadLetters,
      retryAttempts: 185,
      maxEventAge: Duration.hours(24),
    }),
  );
  return { queue, queueDeadLetters, ruleDeadLetters, rule };
};
