import { Duration } from 'aws-cdk-lib';
import type { IEventBus, Rule } from 'aws-cdk-lib/aws-events';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { addStatusChangeQueue } from './status-change-queue.ts';

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
    const statusChanges = addStatusChangeQueue(this, {
      eventBus: props.eventBus,
      readBy: 'the example consumer queue',
      visibilityTimeout: Duration.seconds(60),
      deadLetterReason:
        'This queue is itself a dead-letter queue (of the consumer queue, or of the EventBridge rule target); its depth and its oldest message are alarmed.',
    });
    this.queue = statusChanges.queue;
    this.queueDeadLetters = statusChanges.queueDeadLetters;
    this.ruleDeadLetters = statusChanges.ruleDeadLetters;
    this.rule = statusChanges.rule;
  }
}
