import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeliveryWaker, PendingDelivery } from '#domain/webhooks/ports';
import { logger } from '#shared/logger';
import { sqsClient } from '../aws/sqs-client.ts';

/** SQS delays a message at most 15 minutes; a later retry is woken again on the way. */
export const MAX_DELAY_SECONDS = 900;

/** What a wake-up message says: which delivery, and when it falls due. */
export interface WakeUpMessage {
  tenant: string;
  endpointId: string;
  eventId: string;
  dueAt: string;
}

/** Seconds to hold a wake-up for `dueAt` back, within what SQS allows. */
export const delaySecondsUntil = (dueAt: Date, now: Date): number =>
  Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((dueAt.getTime() - now.getTime()) / 1000)));

/**
 * Wakes the retry sender through a queue: one message per retry, held back by SQS until the retry
 * is due (or 15 minutes, then sent on again). A message that cannot be sent is logged and left: the
 * delivery stays due in the table, and the sender's periodic look sends it.
 */
export class SqsDeliveryWaker implements DeliveryWaker {
  constructor(
    private readonly queueUrl: string,
    private readonly now: () => Date = () => new Date(),
    /** The container's SQS client unless given (made at the first wake-up). */
    private readonly sqs?: Pick<SQSClient, 'send'>,
  ) {}

  async wakeAt(
    delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>,
    dueAt: Date,
  ): Promise<void> {
    const message: WakeUpMessage = {
      tenant: delivery.tenant,
      endpointId: delivery.endpointId,
      eventId: delivery.eventId,
      dueAt: dueAt.toISOString(),
    };
    try {
      await (this.sqs ?? sqsClient()).send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: JSON.stringify(message),
          DelaySeconds: delaySecondsUntil(dueAt, this.now()),
        }),
      );
    } catch (error) {
      logger.warn('A webhook retry could not be woken; the periodic look sends it', {
        eventId: delivery.eventId,
        error: error as Error,
      });
    }
  }
}
