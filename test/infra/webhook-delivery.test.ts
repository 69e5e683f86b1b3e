import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { EventBridgeStatusEventPublisher } from '#adapters/credit-transfers/event-publisher';
import { WEBHOOK_INDEX } from '#adapters/table/table-definition';
import { TENANT_PATH } from '../../lib/constructs/status-change-queue.ts';
import { SYNTH_TIMEOUT_MS, synthesized } from './synth.ts';
import {
  allowedActions,
  getAttTargets,
  type Resource,
  refOf,
  resourcesOf,
  statementsOfFunction,
} from './template-queries.ts';

let template: Template;
beforeAll(async () => {
  [{ template }] = await synthesized({});
}, SYNTH_TIMEOUT_MS);

const functionByEntry = (fragment: string): [string, Resource] => {
  const found = [...resourcesOf(template, 'AWS::Lambda::Function')].filter(([, fn]) =>
    String(fn.Properties.Description).includes(fragment),
  );
  expect(found, fragment).toHaveLength(1);
  return found[0] as [string, Resource];
};

const alarmsOn = (predicate: (alarm: Resource) => boolean) =>
  [...resourcesOf(template, 'AWS::CloudWatch::Alarm').values()].filter(predicate);

describe('webhook delivery on AWS', () => {
  it('copies every status change and batch completion from the bus into a queue, with dead-letter queues for the rule and the queue', () => {
    const [ingestId] = functionByEntry('records status events');
    const mapping = [...resourcesOf(template, 'AWS::Lambda::EventSourceMapping').values()].find(
      (m) => refOf(m.Properties.FunctionName) === ingestId,
    );
    expect(mapping?.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    const [queueId] = getAttTargets(mapping?.Properties.EventSourceArn);
    const queue = resourcesOf(template, 'AWS::SQS::Queue').get(queueId as string);
    expect(queue?.Properties.SqsManagedSseEnabled).toBe(true);
    const [queueDlq] = getAttTargets(
      (queue?.Properties.RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined)?.deadLetterTargetArn,
    );
    expect(queueDlq).toBeDefined();
    // The queue's messages stay hidden for six times the function's timeout, as Lambda advises.
    const [, ingest] = functionByEntry('records status events');
    expect(queue?.Properties.VisibilityTimeout).toBe(6 * (ingest.Properties.Timeout as number));

    const rule = [...resourcesOf(template, 'AWS::Events::Rule').values()].find((r) =>
      ((r.Properties.Targets ?? []) as { Arn: unknown }[]).some((t) =>
        getAttTargets(t.Arn).includes(queueId as string),
      ),
    );
    expect(rule?.Properties.EventPattern).toEqual({
      source: ['credit-transfers'],
      'detail-type': ['CreditTransferStatusChanged', 'CreditTransferBatchCompleted'],
    });
    const target = ((rule?.Properties.Targets ?? []) as { DeadLetterConfig?: { Arn: unknown } }[])[0];
    const [ruleDlq] = getAttTargets(target?.DeadLetterConfig?.Arn);
    expect(new Set([queueId, queueDlq, ruleDlq]).size).toBe(3);
    for (const dlq of [queueDlq, ruleDlq]) {
      expect(
        alarmsOn(
          (alarm) =>
            alarm.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
            (alarm.Properties.Dimensions as { Value: unknown }[] | undefined)?.some((d) =>
              getAttTargets(d.Value).includes(dlq as string),
            ) === true,
        ),
        dlq,
      ).toHaveLength(1);
    }
  });

  it("queues each tenant's events in a message group of its own (an SQS fair queue); the example consumer's queue has none", async () => {
    const targetsOf = (queueId: string) =>
      [...resourcesOf(template, 'AWS::Events::Rule').values()]
        .flatMap((r) => (r.Properties.Targets ?? []) as { Arn: unknown; SqsParameters?: unknown }[])
        .filter((t) => getAttTargets(t.Arn).includes(queueId));
    const [ingestId] = functionByEntry('records status events');
    const mapping = [...resourcesOf(template, 'AWS::Lambda::EventSourceMapping').values()].find(
      (m) => refOf(m.Properties.FunctionName) === ingestId,
    );
    const [webhookQueue] = getAttTargets(mapping?.Properties.EventSourceArn);
    expect(targetsOf(webhookQueue as string)).toEqual([
      expect.objectContaining({ SqsParameters: { MessageGroupId: '$.detail.tenant' } }),
    ]);
    // A standard queue: fair queues are standard queues whose messages carry a group.
    expect(
      resourcesOf(template, 'AWS::SQS::Queue').get(webhookQueue as string)?.Properties.FifoQueue,
    ).toBeUndefined();
    const consumerQueues = [...resourcesOf(template, 'AWS::SQS::Queue').keys()].filter((id) =>
      id.startsWith('StatusEventConsumerQueue'),
    );
    expect(consumerQueues.length).toBeGreaterThan(0);
    for (const id of consumerQueues)
      for (const target of targetsOf(id)) expect(target.SqsParameters).toBeUndefined();

    // Both events the rule copies carry the tenant where the path reads it.
    const sent: PutEventsCommand[] = [];
    const publisher = new EventBridgeStatusEventPublisher(
      {
        send: async (command: unknown) => {
          sent.push(command as PutEventsCommand);
          return { FailedEntryCount: 0 };
        },
      } as never,
      'bus',
    );
    await publisher.publish([
      {
        eventId: 'e1',
        tenant: 'acme',
        paymentId: 'p1',
        sequence: 0,
        status: 'Received',
        date: '2026-01-01T00:00:00Z',
        actor: 'c1',
      },
    ]);
    await publisher.publishBatchCompleted({
      eventId: 'e2',
      tenant: 'globex',
      batchId: 'b1',
      completedAt: '2026-01-01T00:00:00Z',
    });
    const read = (event: unknown, path: string) =>
      path
        .replace(/^\$\./, '')
        .split('.')
        .reduce((value, key) => (value as Record<string, unknown>)[key], event);
    const tenants = sent
      .flatMap((command) => command.input.Entries ?? [])
      .map((entry) => read({ detail: JSON.parse(entry.Detail as string) }, TENANT_PATH));
    expect(tenants).toEqual(['acme', 'globex']);
  });

  it('sends due retries from a function woken by a wake-up queue, and started every minute for what none announced', () => {
    const [deliverId, deliver] = functionByEntry('sends the deliveries that are due');
    const schedule = [...resourcesOf(template, 'AWS::Events::Rule').values()].find((r) =>
      ((r.Properties.Targets ?? []) as { Arn: unknown }[]).some((t) =>
        getAttTargets(t.Arn).includes(deliverId),
      ),
    );
    expect(schedule?.Properties.ScheduleExpression).toBe('rate(1 minute)');
    const mapping = [...resourcesOf(template, 'AWS::Lambda::EventSourceMapping').values()].find(
      (m) => refOf(m.Properties.FunctionName) === deliverId,
    );
    const [wakeUpsId] = getAttTargets(mapping?.Properties.EventSourceArn);
    expect(
      resourcesOf(template, 'AWS::SQS::Queue').get(wakeUpsId as string)?.Properties.SqsManagedSseEnabled,
    ).toBe(true);
    // Both functions make attempts, so both put a wake-up on the queue for each retry.
    for (const fragment of ['records status events', 'sends the deliveries that are due']) {
      const [id, fn] = functionByEntry(fragment);
      const environment = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.stringify(environment.WEBHOOK_WAKE_UP_QUEUE_URL)).toContain(wakeUpsId as string);
      expect(allowedActions(statementsOfFunction(template, id)).has('sqs:SendMessage')).toBe(true);
    }
    // A run lets its last attempts (10 s at most) finish inside its invocation.
    expect(deliver.Properties.Timeout).toBeGreaterThanOrEqual(12);
  });

  it('gives the delivery functions the table items and, to the sender of due deliveries alone, the webhook index, and of KMS only opening the webhook secrets', () => {
    for (const [fragment, queriesDue] of [
      ['records status events', false],
      ['sends the deliveries that are due', true],
    ] as const) {
      const [id] = functionByEntry(fragment);
      const statements = statementsOfFunction(template, id).filter((s) =>
        (Array.isArray(s.Action) ? s.Action : [s.Action]).some((a) => String(a).startsWith('dynamodb:')),
      );
      const resources = JSON.stringify(
        statements.flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource])),
      );
      if (queriesDue) expect(resources).toContain(`/index/${WEBHOOK_INDEX.indexName}`);
      else expect(resources).not.toContain('/index/');
      expect(resources).not.toContain('/index/*');
      const actions = allowedActions(statementsOfFunction(template, id));
      // kms:Decrypt on the webhook secret key alone, to sign deliveries (findings.test.ts).
      expect([...actions].filter((a) => a.startsWith('kms:'))).toEqual(['kms:Decrypt']);
      expect(actions.has('dynamodb:Scan')).toBe(false);
      expect(actions.has('dynamodb:DeleteItem')).toBe(false);
    }
  });

  it('never lets a function on AWS accept a loopback receiver (that is the local runtime only)', () => {
    for (const [id, fn] of resourcesOf(template, 'AWS::Lambda::Function')) {
      const environment =
        (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      expect(environment.WEBHOOK_ALLOW_LOCAL_RECEIVERS, id).toBeUndefined();
      expect(environment.WEBHOOK_RETRY_SCHEDULE_SECONDS, id).toBeUndefined();
    }
  });

  it('alarms when an endpoint is disabled', () => {
    expect(
      alarmsOn(
        (alarm) =>
          alarm.Properties.MetricName === 'WebhookEndpointsDisabled' &&
          alarm.Properties.Namespace === 'CreditTransfers',
      ),
    ).toHaveLength(1);
  });

  it('keeps the events by the table TTL attribute', () => {
    const table = [...resourcesOf(template, 'AWS::DynamoDB::Table').values()][0];
    expect(table?.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    const indexes = ((table?.Properties.GlobalSecondaryIndexes ?? []) as { IndexName: string }[]).map(
      (i) => i.IndexName,
    );
    expect(indexes).toContain(WEBHOOK_INDEX.indexName);
  });
});
