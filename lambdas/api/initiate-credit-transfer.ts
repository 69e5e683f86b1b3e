import type { APIGatewayProxyResult } from 'aws-lambda';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbLimitCounters } from '#adapters/payment-controls/limit-counters';
import { DynamoDbPaymentControlsStore } from '#adapters/payment-controls/payment-controls-store';
import { DynamoDbPaymentHistory } from '#adapters/payment-controls/payment-history';
import {
  DEFAULT_MAX_VALUE_DATE_DAYS,
  type InitiationDependencies,
  initiateCreditTransfer as initiate,
} from '#domain/credit-transfers/initiate-credit-transfer';
import { type ControlsPolicy, controlsPolicy } from '#domain/payment-controls/initiation-controls';
import { publicUrl, wholeNumberEnv } from '#shared/config';
import { callerOf } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import { logger } from '#shared/logger';
import { countTransferInitiated } from '#shared/metrics';
import type { JsonEvent } from '#shared/middleware';
import { acceptedResponse } from './accepted-response.ts';
import { tableStore } from './dependencies.ts';
import { idempotencyKey, servicerHeaders } from './request-headers.ts';
import { initiationDependencies } from './starting-dependencies.ts';

export const initiateCreditTransfer =
  (dependencies: () => InitiationDependencies, baseUrl: () => string = publicUrl) =>
  async (event: JsonEvent): Promise<APIGatewayProxyResult> => {
    // Read first: a missing PUBLIC_URL must fail the request before anything is written.
    const location = baseUrl();
    const { tenant, clientId } = callerOf(event);
    const key = idempotencyKey(event);
    const { creditTransfer, replayed } = await initiate(dependencies(), {
      tenant,
      clientId,
      body: event.jsonBody,
      ...(key !== undefined && { idempotencyKey: key }),
      servicer: servicerHeaders(event),
    });
    logger.appendKeys({ paymentId: creditTransfer.paymentId });
    if (!replayed) countTransferInitiated();
    return acceptedResponse(location, creditTransfer, replayed);
  };

let controls: ControlsPolicy | undefined;
let counters: DynamoDbLimitCounters | undefined;
/** The tenant's payment controls as the initiation reads them, and the limit counters, built once per container. */
const initiationControls = (): Pick<InitiationDependencies, 'controls' | 'limits'> => {
  controls ??= controlsPolicy(
    new DynamoDbPaymentControlsStore(documentClient(), tableName()),
    new DynamoDbPaymentHistory(documentClient(), tableName()),
  );
  counters ??= new DynamoDbLimitCounters(documentClient(), tableName());
  return { controls, limits: { store: tableStore(), counters } };
};

/** MAX_VALUE_DATE_DAYS: how far ahead a valueDate may be (default a year; at most ten). */
const withValueDateHorizon = (): InitiationDependencies => ({
  ...initiationDependencies(),
  ...initiationControls(),
  maxValueDateDays: wholeNumberEnv('MAX_VALUE_DATE_DAYS', DEFAULT_MAX_VALUE_DATE_DAYS, { min: 0, max: 3650 }),
});

export const handler = jsonHttpHandler(initiateCreditTransfer(withValueDateHorizon));
