import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchStartSeconds } from '#domain/iso20022/start-batch-lifecycles';
import { BATCH_START_MAX_SECONDS, MAX_BATCH_TRANSACTIONS } from '#domain/iso20022/submit-batch';
import {
  batchStartsPerSecond,
  PRODUCTION_CONCURRENCY_INPUTS,
  slowestStepSeconds,
} from '../../lib/concurrency.ts';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { stageConfig } from '../../lib/stage-config.ts';
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

  it("paces a batch's starts to what the workflow's reservation absorbs, and fits a largest batch in the function's time", () => {
    const [starter] = [...resourcesOf(prod.template, 'AWS::Lambda::Function').values()].filter(
      (fn) =>
        (fn.Properties.Environment as { Variables?: Record<string, string> } | undefined)?.Variables
          ?.BATCH_STARTS_PER_SECOND !== undefined,
    );
    expect(starter).toBeDefined();
    const properties = starter?.Properties as {
      Environment: { Variables: Record<string, string> };
      Timeout: number;
      ReservedConcurrentExecutions: number;
    };
    const rate = Number(properties.Environment.Variables.BATCH_STARTS_PER_SECOND);
    const reservation = properties.ReservedConcurrentExecutions;
    const inputs = PRODUCTION_CONCURRENCY_INPUTS;
    // The formula's figure, from the reservation the template holds.
    expect(rate).toBe(batchStartsPerSecond(inputs, reservation));
    expect(rate).toBe(16);
    // A batch's starts beside the API's peak stay within what each workflow function runs through.
    expect((rate + inputs.apiRatePerSecond) * slowestStepSeconds(inputs)).toBeLessThanOrEqual(reservation);
    // The largest batch the API takes starts within 80% of the function's timeout.
    expect(inputs.largestBatch).toBe(MAX_BATCH_TRANSACTIONS);
    expect(batchStartSeconds(MAX_BATCH_TRANSACTIONS, rate)).toBeLessThanOrEqual(BATCH_START_MAX_SECONDS);
    expect(BATCH_START_MAX_SECONDS).toBeLessThanOrEqual(properties.Timeout * 0.8);
    const guide = readFileSync(join(PROJECT_ROOT, 'docs/operations.md'), 'utf8').replace(/\s+/g, ' ');
    expect(guide).toContain(`batch starts = ${rate}/s`);
    expect(guide).toContain(
      `${Math.ceil(batchStartSeconds(MAX_BATCH_TRANSACTIONS, rate))} s of its ${properties.Timeout} s timeout`,
    );
  });

  it("refuses a workflow reservation that would pace a largest batch's starts past the function's time", () => {
    const pinned = {
      stage: 'prod',
      account: '123456789012',
      keyAdminRoleArn: 'arn:aws:iam::123456789012:role/payments-key-admin',
      region: 'eu-west-1',
      noCustomDomain: 'true',
      sandbox: 'true',
      alarmEmail: 'oncall@bank.example',
    };
    const configOf = (context: Record<string, string>) => stageConfig((name) => context[name]);
    expect(() => configOf({ ...pinned, reservedConcurrencyWorkflow: '35' })).toThrow(
      "Context reservedConcurrencyWorkflow=35 paces a batch's lifecycle starts to 8 a second: a batch of 2000 would take 250 s, more than 240 s (the batch start's time; 9 a second at least); reserve at least 36 or none",
    );
    expect(configOf({ ...pinned, reservedConcurrencyWorkflow: '36' }).batchStartsPerSecond).toBe(10);
    expect(configOf({ ...pinned, reservedConcurrencyWorkflow: 'none' }).batchStartsPerSecond).toBe(16);
    expect(configOf({}).batchStartsPerSecond).toBe(16);
  });
});
