import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JsonLinesOperationsEventPublisher } from '#adapters/credit-transfers/operations-event-publisher';
import type { Clock } from '#domain/commons/ports';
import { DEFAULT_LIFECYCLE_SETTINGS } from '#domain/credit-transfers/lifecycle-settings';
import { reconcileCreditTransfers } from '#domain/credit-transfers/reconcile-credit-transfers';
import { workflowDependencies } from '#workflow/dependencies';
import { type ConnectorStub, startConnectorStub } from '../../support/connector-stub.ts';
import {
  initiate,
  lifecycleStore,
  publishingAnnouncer,
  startRunner,
  startWorkflowEnvironment,
  stored,
} from './harness.ts';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

/**
 * The bank's connector goes away for everyone, for longer than a transfer's attempts last, then
 * comes back: recovery pauses (nothing started, no attempt counted, nothing parked) and resumes
 * by itself once the connector answers, with a connector stand-in on loopback behind the real
 * connector rail.
 */
const KEY = 'outage-connector-key-0123456789';
let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;
let stub: ConnectorStub;
beforeAll(async () => {
  environment = await startWorkflowEnvironment();
  stub = await startConnectorStub(KEY);
  Object.assign(process.env, {
    CONNECTOR_URL: stub.url,
    CONNECTOR_SECRET: KEY,
    CONNECTOR_TIMEOUT_MS: '300',
    CONNECTOR_MAX_ATTEMPTS: '1',
  });
});
afterAll(async () => {
  await stub?.close();
  await environment?.close();
});

/** Each run an hour after the last: every transfer the previous run touched is due again. */
let hour = 0;
const nextRunClock = (): Clock => {
  hour += 1;
  const date = new Date(Date.now() + hour * 3_600_000);
  return { now: () => date };
};

describe('a connector outage longer than every transfer’s attempts', () => {
  it('parks nothing and counts no attempt while the connector answers nothing, then settles every transfer once it is back', async () => {
    await stub.down();
    const { runner } = await startRunner();
    const paymentIds = [await initiate(runner), await initiate(runner), await initiate(runner)];
    await runner.idle();
    const reconcileOnce = () =>
      reconcileCreditTransfers({
        queue: lifecycleStore(),
        store: lifecycleStore(),
        rail: workflowDependencies().rail,
        workflow: runner,
        announcer: publishingAnnouncer,
        clock: nextRunClock(),
        settings: DEFAULT_LIFECYCLE_SETTINGS,
        events: new JsonLinesOperationsEventPublisher(process.env.EVENTS_FILE as string),
      });

    for (let run = 0; run < DEFAULT_LIFECYCLE_SETTINGS.maxAttempts + 2; run++) {
      const report = await reconcileOnce();
      await runner.idle();
      expect(report).toMatchObject({ railAvailable: false, paused: 3, started: 0, parked: 0, stuck: 0 });
    }
    for (const paymentId of paymentIds) {
      const record = await stored(paymentId);
      expect(record.parked).toBeUndefined();
      expect(record.stalledAttempts ?? 0).toBe(0);
      expect(record.status).toBe('Received');
    }

    await stub.up();
    expect(await reconcileOnce()).toMatchObject({ railAvailable: true, paused: 0, started: 3 });
    await runner.idle();
    for (const paymentId of paymentIds) {
      expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
      expect(stub.submissions.get(paymentId)).toBe(1);
    }
  });
});
