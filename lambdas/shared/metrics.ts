import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { StatusChangedEvent, StatusEventPublisher } from '#domain/credit-transfers/ports';
import { SERVICE_NAME } from './logger.ts';

/**
 * The service's business metrics, as CloudWatch embedded metric format lines (no API call).
 * The alarms name exactly these. Off locally (POWERTOOLS_METRICS_DISABLED=true): EMF lines mean
 * nothing without CloudWatch.
 */
export const METRICS_NAMESPACE = 'CreditTransfers';
/** The stage (set by the stack) is a dimension of every metric, so each stage's alarms watch their own. */
const stage = process.env.STAGE;
export const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: SERVICE_NAME,
  ...(stage !== undefined && stage !== '' && { defaultDimensions: { stage } }),
});

/** Publishes what this invocation stored; nothing (and no "no metrics" warning) when it stored none. */
export const flushMetrics = (): void => {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
};

/** A client's initiation accepted (not a replay of one). */
export const countTransferInitiated = (): void => {
  metrics.addMetric('TransfersInitiated', MetricUnit.Count, 1);
};

/** Transfers found past their due time while not final: the workflow lost them for a while. */
export const countTransfersStuck = (count: number): void => {
  metrics.addMetric('TransfersStuck', MetricUnit.Count, count);
};

/**
 * Transfers waiting for an operator (`ParkedTransfers`, every reconciler run: its alarm stays raised,
 * paging once, until none is left) and those parked just now (`TransfersParked`).
 */
export const PARKED_TRANSFERS_METRIC = 'ParkedTransfers';
export const countParkedTransfers = (inAll: number): void => {
  metrics.addMetric(PARKED_TRANSFERS_METRIC, MetricUnit.Count, inAll);
};
/** 1 when the reconciler's probe found the rail answering nothing (recovery paused), else 0. */
export const RAIL_UNAVAILABLE_METRIC = 'RailUnavailable';
export const countRailUnavailable = (available: boolean): void => {
  metrics.addMetric(RAIL_UNAVAILABLE_METRIC, MetricUnit.Count, available ? 0 : 1);
};
export const countTransfersParked = (justNow: number): void => {
  if (justNow > 0) metrics.addMetric('TransfersParked', MetricUnit.Count, justNow);
};

/** One transfer rejected, by its ISO 20022 reason: a line of its own, since `reason` is its dimension. */
const countTransferRejected = (reason: string): void => {
  const single = metrics.singleMetric();
  single.addDimension('reason', reason);
  single.addMetric('TransfersRejected', MetricUnit.Count, 1);
};

const countStatusChange = (event: StatusChangedEvent): void => {
  if (event.status === 'Rejected') countTransferRejected(event.statusReason ?? 'Unspecified');
  if (event.status === 'Cancelled') metrics.addMetric('TransfersCancelled', MetricUnit.Count, 1);
};

/**
 * Counts rejections and cancellations as their status events go out: each change is published
 * once (from the watermark), whichever step or actor made it.
 */
export const countingStatusEvents = (publisher: StatusEventPublisher): StatusEventPublisher => ({
  publish: async (events) => {
    await publisher.publish(events);
    for (const event of events) countStatusChange(event);
  },
});

/** A webhook endpoint disabled (410 Gone, or failing for three days): its owner receives nothing more. */
export const WEBHOOK_ENDPOINTS_DISABLED_METRIC = 'WebhookEndpointsDisabled';
export const countWebhookEndpointDisabled = (): void => {
  metrics.addMetric(WEBHOOK_ENDPOINTS_DISABLED_METRIC, MetricUnit.Count, 1);
};

/**
 * A token request for an unknown or disabled client refused without a secret derivation: its
 * source address had spent its budget of checks (a flood of made-up client ids).
 */
export const SECRET_CHECKS_SKIPPED_METRIC = 'SecretChecksSkipped';
export const countSecretCheckSkipped = (): void => {
  metrics.addMetric(SECRET_CHECKS_SKIPPED_METRIC, MetricUnit.Count, 1);
};

/**
 * A status event dropped because the table holds no such change: someone put it on the bus who
 * should not have. Any at all is alarmed.
 */
export const STATUS_EVENTS_FORGED_METRIC = 'StatusEventsForged';
export const countStatusEventForged = (): void => {
  metrics.addMetric(STATUS_EVENTS_FORGED_METRIC, MetricUnit.Count, 1);
};

/**
 * A connector answered a reason code outside ISO's ExternalStatusReason1Code: the refusal went on
 * as a narrative (NARR), and the bank's connector needs fixing.
 */
export const UNKNOWN_STATUS_REASON_CODES_METRIC = 'UnknownStatusReasonCodes';
export const countUnknownStatusReasonCode = (): void => {
  metrics.addMetric(UNKNOWN_STATUS_REASON_CODES_METRIC, MetricUnit.Count, 1);
};
