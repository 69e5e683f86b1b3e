import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesized } from './synth.ts';
import { refOf, resourcesOf } from './template-queries.ts';

const TICKETS = 'arn:aws:sns:eu-west-1:111111111111:payments-tickets';

/** The logical id of the topic an alarm notifies (its own topics only). */
const alarmTopics = (s: Synthesized, alarmId: string): string[] => {
  const alarms = [...resourcesOf(s.template, 'AWS::CloudWatch::Alarm')].filter(([id]) =>
    id.startsWith(`Monitoring${alarmId}`),
  );
  expect(alarms, alarmId).toHaveLength(1);
  const actions = (alarms[0]?.[1].Properties.AlarmActions ?? []) as unknown[];
  return actions.map((action) => refOf(action) ?? String(action));
};

describe('operations of a production stage', () => {
  let prod: Synthesized;
  beforeAll(async () => {
    [prod] = await synthesized({
      stage: 'prod',
      // Every prod stage names its account and its key administrator.
      account: '123456789012',
      keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
      region: 'eu-west-1',
      noCustomDomain: 'true',
      sandbox: 'true',
      alarmEmail: 'oncall@bank.example',
      ticketTopicArn: TICKETS,
    });
  }, SYNTH_TIMEOUT_MS);

  it('pages for money at risk and files a ticket for the rest', () => {
    for (const paging of [
      'TransfersParked',
      'TransfersStuck',
      'RailUnavailable',
      'Api5xxRate',
      'WebhookQueueOldestMessage',
    ])
      expect(alarmTopics(prod, paging), paging).toEqual([expect.stringMatching(/^MonitoringAlarmTopic/)]);
    for (const ticket of ['ApiP99Latency', 'WorkflowExecutionsFailed', 'TableThrottles'])
      expect(alarmTopics(prod, ticket), ticket).toEqual([
        expect.stringMatching(/^MonitoringTicketTopic/),
        TICKETS,
      ]);
  });

  it('deploys no example consumer queue', () => {
    expect(prod.template.toJSON().Outputs.StatusEventQueueUrl).toBeUndefined();
    const alarms = [...resourcesOf(prod.template, 'AWS::CloudWatch::Alarm').keys()];
    expect(alarms.filter((id) => id.includes('StatusEventQueue'))).toEqual([]);
  });

  it('reserves the concurrency docs/operations.md states, and states the quota it needs', () => {
    const total = [...resourcesOf(prod.template, 'AWS::Lambda::Function').values()].reduce(
      (sum, fn) => sum + Number(fn.Properties.ReservedConcurrentExecutions ?? 0),
      0,
    );
    const guide = readFileSync(join(PROJECT_ROOT, 'docs/operations.md'), 'utf8').replace(/\s+/g, ' ');
    expect(guide).toContain(`${total} in all`);
    expect(guide).toContain(`a limit of at least ${total + 100}`);
  });
});
