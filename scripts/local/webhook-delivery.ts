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
  transferApprovals,
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

/** Bytes of the events file read at once. */
const READ_BYTES = 1 << 20;
/**
 * Status changes of one tenant recorded per round: every tenant with changes waiting has its next
 * ones in each round, so one tenant's backlog delays another's changes by a round, not by the
 * backlog.
 */
export const ROUND_PER_TENANT = 256;
/**
 * Lines of the file read ahead of the recorded offset at most (each held as its position, tenant
 * and transfer): a tenant's changes behind a backlog this long are found at once.
 */
const MAX_LINES_AHEAD = 200_000;
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

/**
 * The whole lines of the file after `offset`, at most READ_BYTES of them, each with where it
 * starts and ends; `from` is 0 rather than `offset` when the file is shorter than that (the data
 * folder was replaced: it is read anew).
 */
const readLines = async (
  file: string,
  offset: number,
): Promise<{ from: number; lines: { start: number; end: number; text: string }[] }> => {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { from: offset, lines: [] };
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const from = size < offset ? 0 : offset;
    const length = Math.min(size - from, READ_BYTES);
    if (length <= 0) return { from, lines: [] };
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, from);
    const lines: { start: number; end: number; text: string }[] = [];
    for (let at = 0, newline = buffer.indexOf(0x0a); newline >= 0; newline = buffer.indexOf(0x0a, at)) {
      lines.push({ start: from + at, end: from + newline + 1, text: buffer.toString('utf8', at, newline) });
      at = newline + 1;
    }
    return { from, lines };
  } finally {
    await handle.close();
  }
};

/** Reads the given lines of the file again (a backlog is held by position only). */
const readTexts = async (file: string, lines: readonly BusLine[]): Promise<string[]> => {
  const handle = await open(file, 'r');
  try {
    const texts: string[] = [];
    for (const line of lines) {
      const buffer = Buffer.alloc(line.end - line.start - 1);
      await handle.read(buffer, 0, buffer.length, line.start);
      texts.push(buffer.toString('utf8'));
    }
    return texts;
  } finally {
    await handle.close();
  }
};

/** A status change on the bus not recorded yet: where its line is, and whose transfer it is. */
export interface BusLine {
  start: number;
  end: number;
  tenant: string;
  /** The transfer, or for a batch completion `batch <batchId>`: what groups a line in a round. */
  paymentId: string;
  /** A transfer's status change, or a batch's completion (recorded after the round's changes). */
  kind?: 'batchCompleted';
}

/**
 * The status changes read from the bus and not yet recorded, in file order. Each round takes
 * every tenant's next ROUND_PER_TENANT changes; the recorded offset moves only past the lines
 * before the first change not yet recorded, so a crash reads again what was not recorded (and
 * some that was: recording ignores those) and loses nothing.
 */
export class BusBacklog {
  private lines: BusLine[] = [];
  private readonly recorded = new Set<BusLine>();
  /** Where reading goes on, and where the lines already recorded end. */
  private readEnd: number;

  constructor(private recordedUpTo: number) {
    this.readEnd = recordedUpTo;
  }

  get readFrom(): number {
    return this.readEnd;
  }

  get full(): boolean {
    return this.lines.length >= MAX_LINES_AHEAD;
  }

  get size(): number {
    return this.lines.length;
  }

  /** The file was replaced: everything is read anew from its start. */
  restart(): void {
    this.lines = [];
    this.recorded.clear();
    this.readEnd = 0;
    this.recordedUpTo = 0;
  }

  /** Lines read after the last ones; `line` is undefined for a line that is no status change. */
  add(read: { end: number; line?: BusLine }[]): void {
    for (const { end, line } of read) {
      if (line !== undefined) this.lines.push(line);
      this.readEnd = end;
    }
  }

  /** Each tenant's next `perTenant` changes, in file order. */
  round(perTenant = ROUND_PER_TENANT): BusLine[] {
    const taken = new Map<string, number>();
    return this.lines.filter((line) => {
      const count = taken.get(line.tenant) ?? 0;
      if (count >= perTenant) return false;
      taken.set(line.tenant, count + 1);
      return true;
    });
  }

  markRecorded(line: BusLine): void {
    this.recorded.add(line);
  }

  /** Drops the recorded lines; answers the offset up to which every line is recorded. */
  settle(): number {
    this.lines = this.lines.filter((line) => !this.recorded.has(line));
    this.recorded.clear();
    this.recordedUpTo = this.lines[0]?.start ?? this.readEnd;
    return this.recordedUpTo;
  }
}

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
  const backlog = new BusBacklog(offset);
  const pollIntervalMs = options.pollIntervalMs ?? 200;

  /** Reads the lines written since the last read, up to MAX_LINES_AHEAD changes not yet recorded. */
  const readAhead = async () => {
    while (!backlog.full) {
      const { from, lines } = await readLines(options.eventsFile, backlog.readFrom);
      if (from !== backlog.readFrom) backlog.restart();
      if (lines.length === 0) return;
      backlog.add(
        lines.map(({ start, end, text }) => {
          const completion = busEventOf(text, BATCH_COMPLETED_EVENT)?.detail as
            | { tenant?: unknown; batchId?: unknown }
            | undefined;
          if (completion !== undefined && completion !== null)
            return {
              end,
              line: {
                start,
                end,
                tenant: String(completion.tenant),
                paymentId: `batch ${String(completion.batchId)}`,
                kind: 'batchCompleted' as const,
              },
            };
          const change = statusEventOf(text)?.detail as { tenant?: unknown; paymentId?: unknown } | undefined;
          if (change === undefined || change === null) return { end };
          // The events are as the bus holds them, not yet checked: tenant and paymentId only group them.
          return {
            end,
            line: { start, end, tenant: String(change.tenant), paymentId: String(change.paymentId) },
          };
        }),
      );
    }
  };

  /**
   * Records one round of the backlog (each tenant's next changes) and makes their first
   * deliveries; a change that fails stays in the backlog for the next round, and so do the later
   * changes of its transfer.
   */
  const recordRound = async (round: readonly BusLine[]): Promise<unknown> => {
    const texts = await readTexts(options.eventsFile, round);
    const changeOf = new Map(
      round.map((line, index) => [
        line,
        busEventOf(
          texts[index] as string,
          line.kind === 'batchCompleted' ? BATCH_COMPLETED_EVENT : STATUS_CHANGED_EVENT,
        )?.detail,
      ]),
    );
    // One transfer's changes are recorded in order (so the events list has them in order),
    // different transfers' side by side, the tenants in turns; batch completions after the
    // round's changes, since a batch completes after its transfers.
    const transfers = inTenantTurns(round.filter((line) => line.kind === undefined));
    const completions = round.filter((line) => line.kind === 'batchCompleted');
    // EventBridge's rule sends them to the queue first (the queue's policy must allow it): refused,
    // they stay on the bus, retried as EventBridge retries a target.
    await checkServiceCall({ kind: 'bus-to-queue', functionName: 'WebhookIngest' });
    await queueRead('sqs:ReceiveMessage');
    const recording = {
      ...deps,
      endpoints: endpointsOncePerBatch(deps.endpoints),
      histories: historiesOncePerBatch(transferHistories()),
      approvals: transferApprovals(),
      batches: completedBatches(),
      onForged,
    };
    // First deliveries go on while the next changes are recorded; a change counts as recorded
    // once its first deliveries are made or queued.
    const firstDeliveries: Promise<void>[] = [];
    let failure: unknown;
    for (let start = 0; start < transfers.length; ) {
      const concurrency = options.workflowBacklogged?.()
        ? RECORD_CONCURRENCY_BEHIND_WORKFLOW
        : RECORD_CONCURRENCY;
      const chunk = transfers.slice(start, start + concurrency);
      start += chunk.length;
      await Promise.all(
        chunk.map(async (lines) => {
          for (const line of lines) {
            // One message of the queue's reader on AWS: one invocation, which records the change
            // and makes its first deliveries, under its role.
            const requestId = randomUUID();
            let recorded: Awaited<ReturnType<typeof recordStatusEventFromBus>>;
            try {
              recorded = await inOwnContext(
                'WebhookIngest',
                requestId,
                // Metrics are kept per invocation (its request id): published before it ends.
                () => recordStatusEventFromBus(recording, changeOf.get(line)).finally(flushMetrics),
                INGEST_ENTRY,
              );
            } catch (error) {
              failure ??= error;
              return;
            }
            if (recorded === undefined) {
              backlog.markRecorded(line);
              continue;
            }
            // The recording is metered as the invocation; its first deliveries are added to it.
            const started = performance.now();
            firstDeliveries.push(
              inOwnContext('WebhookIngest', requestId, async () => {
                await makeFirstDeliveries(deps, dispatcher, recorded);
                dispatcher.offer(recorded.queued);
              })
                .then(() => backlog.markRecorded(line))
                .catch((error: unknown) => {
                  failure ??= error;
                })
                .finally(() => {
                  if (recorded.first.length > 0) addBilledDuration(INGEST_ENTRY, performance.now() - started);
                }),
            );
          }
        }),
      );
    }
    for (const line of completions) {
      const requestId = randomUUID();
      let recorded: Awaited<ReturnType<typeof recordBatchCompletedFromBus>>;
      try {
        recorded = await inOwnContext(
          'WebhookIngest',
          requestId,
          () => recordBatchCompletedFromBus(recording, changeOf.get(line)).finally(flushMetrics),
          INGEST_ENTRY,
        );
      } catch (error) {
        failure ??= error;
        continue;
      }
      if (recorded === undefined) {
        backlog.markRecorded(line);
        continue;
      }
      const made = recorded;
      firstDeliveries.push(
        inOwnContext('WebhookIngest', requestId, async () => {
          await makeFirstDeliveries(deps, dispatcher, made);
          dispatcher.offer(made.queued);
        })
          .then(() => backlog.markRecorded(line))
          .catch((error: unknown) => {
            failure ??= error;
          }),
      );
    }
    await Promise.all(firstDeliveries);
    if (failure === undefined) await queueRead('sqs:DeleteMessage');
    return failure;
  };

  const readBus = async () => {
    for (;;) {
      await readAhead();
      const round = backlog.round();
      const failure = round.length > 0 ? await recordRound(round) : undefined;
      const recordedUpTo = backlog.settle();
      if (recordedUpTo !== offset) {
        offset = recordedUpTo;
        await writeOffset(offset);
      }
      // Recorded again in the next round: a recording that stopped part way queues each delivery
      // that has neither a first attempt recorded nor a queued delivery.
      if (failure !== undefined) throw failure;
      if (round.length === 0) return;
    }
  };

  let stopped = false;
  const every = (name: string, look: () => Promise<unknown>) => {
    let timer: NodeJS.Timeout | undefined;
    let turn: Promise<void> = Promise.resolve();
    const tick = async () => {
      try {
        await look();
      } catch (error) {
        console.error(`Webhook delivery: ${name} failed; tried again shortly`, error);
      }
      if (!stopped) {
        timer = setTimeout(() => {
          turn = tick();
        }, pollIntervalMs);
      }
    };
    turn = tick();
    return async () => {
      clearTimeout(timer);
      await turn;
    };
  };
  // The bus and the queue each have their own loop: retries fall due and go out while a backlog
  // of status changes is being recorded.
  const stopReading = every('reading the events', readBus);
  const stopSending = every('reading the queue', async () => {
    // The retry sender runs when its schedule may invoke it (the function's resource policy).
    await checkServiceCall({ kind: 'scheduled', functionName: 'WebhookDeliver' });
    await inOwnContext('WebhookDeliver', `deliver-${Date.now()}`, () => dispatcher.pump());
  });

  return {
    released,
    stop: async () => {
      stopped = true;
      await Promise.all([stopReading(), stopSending()]);
      // Attempts still running end with the process; their claims are released at the next start.
      await Promise.race([dispatcher.idle(), new Promise((resolve) => setTimeout(resolve, 2000))]);
    },
  };
};
