import { randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import type { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { checkStandInCall } from '#adapters/aws/stand-ins';
import { BATCH_COMPLETED_EVENT } from '#adapters/credit-transfers/event-publisher';
import { localEventBusOffsetKey } from '#adapters/table/keys';
import { SqsDeliveryWaker } from '#adapters/webhooks/delivery-waker';
import { STATUS_CHANGED_EVENT } from '#domain/credit-transfers/lifecycle';
import { historiesOncePerBatch } from '#domain/webhooks/status-event-check';
import {
  endpointsOncePerBatch,
  makeFirstDeliveries,
  recordBatchCompletedFromBus,
  recordStatusEventFromBus,
} from '#domain/webhooks/webhook-delivery';
import { DEFAULT_DISPATCHER_LIMITS, DeliveryDispatcher } from '#domain/webhooks/webhook-dispatcher';
import { countStatusEventForged, flushMetrics } from '#shared/metrics';
import {
  completedBatches,
  deliveryDependencies,
  transferHistories,
} from '../../lambdas/webhooks/dependencies.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './iam-policies.ts';
import { addBilledDuration } from './invocation-meter.ts';
import { inOwnContext } from './invocations.ts';
import { checkServiceCall } from './service-calls.ts';
import { FairQueue } from './workflow-runner.ts';

/** On AWS the queue's reader records each status change and makes its first attempts. */
const INGEST_ENTRY = 'lambdas/webhooks/ingest-status-events.ts';

/**
 * Webhook delivery in the local runtime: what an EventBridge rule, a queue and the delivery
 * function do on AWS. The events file is the local bus; this reads it on from where it last got
 * (the offset is kept in the table, and moves only once the events before it are recorded and
 * their deliveries queued there), so a crash reads some events again, which recording ignores,
 * and loses none. A line that is no true change of a stored transfer (anyone can append to a
 * file) is dropped, as on AWS: never delivered nor listed, logged and counted
 * (StatusEventsForged, printed with POWERTOOLS_METRICS_DISABLED=false). Deliveries go out from
 * the queue in the table.
 */
export interface LocalWebhookDelivery {
  /** Deliveries cut short by the previous run's end, made due again at start. */
  released: number;
  stop(): Promise<void>;
}

/** Bytes of the events file read per look: a long backlog is recorded a slice at a time. */
const READ_BYTES = 1 << 20;
/** Status events recorded at once. */
const RECORD_CONCURRENCY = 8;
/**
 * ... while workflow executions wait for a slot: recording shares the machine with the workflow
 * here (on AWS they scale apart), and settling a payment comes before telling about it.
 */
const RECORD_CONCURRENCY_BEHIND_WORKFLOW = 1;

/**
 * The wake-up queue as the delivery functions' waker calls it: SendMessage is checked against the
 * caller's IAM like any call, and then nothing more is needed, since the local worker looks at the
 * table for due deliveries every poll. The functions keep the waker they have on AWS, so a refused
 * wake-up takes its own path (logged, left to the periodic look).
 */
const localWakeUps: Pick<SQSClient, 'send'> = {
  send: (async (_command: SendMessageCommand) => {
    await checkStandInCall({ action: 'sqs:SendMessage', resource: 'WEBHOOK_WAKE_UP_QUEUE_URL' });
    return {};
  }) as Pick<SQSClient, 'send'>['send'],
};
const LOCAL_WAKE_UP_QUEUE_URL = `https://sqs.${LOCAL_REGION}.amazonaws.com/${LOCAL_ACCOUNT}/webhook-wake-ups`;

/** The queue the ingest function reads on AWS: Lambda receives and deletes its messages with the function's role. */
const queueRead = (action: 'sqs:ReceiveMessage' | 'sqs:DeleteMessage') =>
  inOwnContext('WebhookIngest', randomUUID(), () =>
    checkStandInCall({ action, resource: 'EVENT_SOURCE_QUEUE' }),
  );

const readOffset = async (): Promise<number> => {
  const { Item } = await documentClient().get({
    TableName: tableName(),
    Key: localEventBusOffsetKey(),
    ConsistentRead: true,
  });
  return typeof Item?.offset === 'number' ? Item.offset : 0;
};

const writeOffset = async (offset: number): Promise<void> => {
  await documentClient().put({ TableName: tableName(), Item: { ...localEventBusOffsetKey(), offset } });
};

/** The whole lines of the file after `offset`, at most READ_BYTES of them, and the offset after them. */
const readLines = async (file: string, offset: number): Promise<{ lines: string[]; next: number }> => {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], next: offset };
    throw error;
  }
  try {
    const { size } = await handle.stat();
    // A file shorter than the offset is a new one (the data folder was replaced): read it all.
    const from = size < offset ? 0 : offset;
    const length = Math.min(size - from, READ_BYTES);
    if (length <= 0) return { lines: [], next: from };
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, from);
    const end = buffer.lastIndexOf(0x0a);
    if (end < 0) return { lines: [], next: from };
    return {
      lines: buffer.subarray(0, end).toString('utf8').split('\n'),
      next: from + end + 1,
    };
  } finally {
    await handle.close();
  }
};

/** The detail of a line of `detailType`, as written: checked against the table before it counts. */
const busEventOf = (line: string, detailType: string): { detail: unknown } | undefined => {
  try {
    const envelope = JSON.parse(line) as { 'detail-type'?: string; detail?: unknown };
    return envelope['detail-type'] === detailType ? { detail: envelope.detail } : undefined;
  } catch {
    // A line torn by a crash is set aside at start; anything else unreadable is not an event.
    return undefined;
  }
};
const statusEventOf = (line: string) => busEventOf(line, STATUS_CHANGED_EVENT);

/**
 * The status changes of a slice of the bus, grouped per transfer (one transfer's changes in
 * order), the transfers in tenant turns: one of each tenant's, then the next of each, so one
 * tenant's flood delays another tenant's first change by one turn, not by the flood.
 */
export const inTenantTurns = <T>(events: readonly T[]): T[][] => {
  // The events are as the bus holds them, not yet checked: tenant and paymentId only group them.
  const tenantOf = (event: unknown) => String((event as { tenant?: unknown } | null)?.tenant ?? '');
  const byTransfer = new Map<string, T[]>();
  for (const event of events) {
    const { tenant, paymentId } = (event ?? {}) as Record<string, unknown>;
    const key = JSON.stringify([tenant, paymentId]);
    const group = byTransfer.get(key);
    if (group) group.push(event);
    else byTransfer.set(key, [event]);
  }
  const turns = new FairQueue<T[]>();
  let order = 0;
  for (const group of byTransfer.values()) turns.push(tenantOf(group[0]), order++, group);
  const ordered: T[][] = [];
  for (let group = turns.shift(); group !== undefined; group = turns.shift()) ordered.push(group);
  return ordered;
};

const onForged = (event: unknown, reason: string): void => {
  const { tenant, paymentId, sequence, status } = (event ?? {}) as Record<string, unknown>;
  console.error(
    `Local event bus: a line that is no change of a stored transfer was dropped (${reason}): ${JSON.stringify({ tenant, paymentId, sequence, status })}`,
  );
  countStatusEventForged();
};

export const startLocalWebhookDelivery = async (options: {
  eventsFile: string;
  pollIntervalMs?: number;
  /** True while workflow executions wait for a slot to run. */
  workflowBacklogged?: () => boolean;
}): Promise<LocalWebhookDelivery> => {
  const wired = deliveryDependencies();
  const deps = {
    ...wired,
    waker: wired.waker ?? new SqsDeliveryWaker(LOCAL_WAKE_UP_QUEUE_URL, undefined, localWakeUps),
  };
  const dispatcher = new DeliveryDispatcher(deps, DEFAULT_DISPATCHER_LIMITS, {
    onError: (error, delivery) =>
      console.error(`Webhook delivery of event ${delivery.eventId} failed; it is due again later`, error),
  });
  // Each part runs as the function that does it on AWS, under its IAM policies; the bus offset is
  // the local bus's own bookkeeping (no function's: on AWS the queue keeps it).
  const released = await inOwnContext('WebhookDeliver', 'release-claims', () =>
    deps.deliveries.releaseClaims(deps.clock.now()),
  );
  let offset = await readOffset();
  const pollIntervalMs = options.pollIntervalMs ?? 200;

  const readBus = async () => {
    for (;;) {
      const { lines, next } = await readLines(options.eventsFile, offset);
      if (next === offset && lines.length === 0) return;
      // One transfer's changes are recorded in order (so the events list has them in order),
      // different transfers' side by side, the tenants in turns.
      const transfers = inTenantTurns(lines.flatMap((line) => statusEventOf(line)?.detail ?? []));
      // Batch completions after the slice's status changes: a batch completes after its transfers.
      const completions = lines.flatMap((line) => busEventOf(line, BATCH_COMPLETED_EVENT)?.detail ?? []);
      if (transfers.length > 0 || completions.length > 0) {
        // EventBridge's rule sends them to the queue first (the queue's policy must allow it): refused,
        // they stay on the bus, retried as EventBridge retries a target.
        await checkServiceCall({ kind: 'bus-to-queue', functionName: 'WebhookIngest' });
        await queueRead('sqs:ReceiveMessage');
      }
      const recording = {
        ...deps,
        endpoints: endpointsOncePerBatch(deps.endpoints),
        histories: historiesOncePerBatch(transferHistories()),
        batches: completedBatches(),
        onForged,
      };
      // First deliveries go on while the next changes are recorded; the offset moves past the
      // slice only once each of its changes has its first deliveries made or queued.
      const firstDeliveries: Promise<void>[] = [];
      let firstFailure: unknown;
      for (let start = 0; start < transfers.length; ) {
        const concurrency = options.workflowBacklogged?.()
          ? RECORD_CONCURRENCY_BEHIND_WORKFLOW
          : RECORD_CONCURRENCY;
        const chunk = transfers.slice(start, start + concurrency);
        start += chunk.length;
        await Promise.all(
          chunk.map(async (changes) => {
            for (const change of changes) {
              // One message of the queue's reader on AWS: one invocation, which records the change
              // and makes its first deliveries, under its role.
              const requestId = randomUUID();
              const recorded = await inOwnContext(
                'WebhookIngest',
                requestId,
                // Metrics are kept per invocation (its request id): published before it ends.
                () => recordStatusEventFromBus(recording, change).finally(flushMetrics),
                INGEST_ENTRY,
              );
              if (recorded === undefined) continue;
              // The recording is metered as the invocation; its first deliveries are added to it.
              const started = performance.now();
              firstDeliveries.push(
                inOwnContext('WebhookIngest', requestId, async () => {
                  await makeFirstDeliveries(deps, dispatcher, recorded);
                  dispatcher.offer(recorded.queued);
                })
                  .catch((error: unknown) => {
                    firstFailure ??= error;
                  })
                  .finally(() => {
                    if (recorded.first.length > 0)
                      addBilledDuration(INGEST_ENTRY, performance.now() - started);
                  }),
              );
            }
          }),
        );
      }
      for (const completion of completions) {
        const requestId = randomUUID();
        const recorded = await inOwnContext(
          'WebhookIngest',
          requestId,
          () => recordBatchCompletedFromBus(recording, completion).finally(flushMetrics),
          INGEST_ENTRY,
        );
        if (recorded === undefined) continue;
        firstDeliveries.push(
          inOwnContext('WebhookIngest', requestId, async () => {
            await makeFirstDeliveries(deps, dispatcher, recorded);
            dispatcher.offer(recorded.queued);
          }).catch((error: unknown) => {
            firstFailure ??= error;
          }),
        );
      }
      await Promise.all(firstDeliveries);
      // Read again from the same offset: recording the changes again queues each delivery that has
      // neither a first attempt recorded nor a queued delivery.
      if (firstFailure !== undefined) throw firstFailure;
      if (transfers.length > 0 || completions.length > 0) await queueRead('sqs:DeleteMessage');
      offset = next;
      await writeOffset(offset);
    }
  };

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let turn: Promise<void> = Promise.resolve();
  const tick = async () => {
    try {
      await readBus();
      // The retry sender runs when its schedule may invoke it (the function's resource policy).
      await checkServiceCall({ kind: 'scheduled', functionName: 'WebhookDeliver' });
      await inOwnContext('WebhookDeliver', `deliver-${Date.now()}`, () => dispatcher.pump());
    } catch (error) {
      console.error('Webhook delivery: reading the events or the queue failed; tried again shortly', error);
    }
    if (!stopped) {
      timer = setTimeout(() => {
        turn = tick();
      }, pollIntervalMs);
    }
  };
  turn = tick();

  return {
    released,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await turn;
      // Attempts still running end with the process; their claims are released at the next start.
      await Promise.race([dispatcher.idle(), new Promise((resolve) => setTimeout(resolve, 2000))]);
    },
  };
};
