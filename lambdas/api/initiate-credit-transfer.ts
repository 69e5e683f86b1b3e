import type { APIGatewayProxyResult } from 'aws-lambda';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbPaymentControlsStore } from '#adapters/payment-controls/payment-controls-store';
import { DynamoDbPaymentHistory } from '#adapters/payment-controls/payment-history';
import {
  DEFAULT_MAX_VALUE_DATE_DAYS,
  type InitiationDependencies,
  initiateCreditTransfer as initiate,
} from '#domain/credit-transfers/initiate-credit-transfer';
import { type ApprovalPolicy, approvalPolicy } from '#domain/payment-controls/initiation-controls';
import { publicUrl, wholeNumberEnv } from '#shared/config';
import { callerOf } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import { logger } from '#shared/logger';
import { countTransferInitiated } from '#shared/metrics';
import type { JsonEvent } from '#shared/middleware';
import { acceptedResponse } from './accepted-response.ts';
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

let approvals: ApprovalPolicy | undefined;
/** The tenant's payment controls as the initiation reads them, built once per container. */
const initiationApprovals = (): ApprovalPolicy => {
  approvals ??= approvalPolicy(
    new DynamoDbPaymentControlsStore(documentClient(), tableName()),
    new DynamoDbPaymentHistory(documentClient(), tableName()),
  );
  return approvals;
};

/** MAX_VALUE_DATE_DAYS: how far ahead a valueDate may be (default a year; at most ten). */
const withValueDateHorizon = (): InitiationDependencies => ({
  ...initiationDependencies(),
  approvals: initiationApprovals(),
  maxValueDateDays: wholeNumberEnv('MAX_VALUE_DATE_DAYS', DEFAULT_MAX_VALUE_DATE_DAYS, { min: 0, max: 3650 }),
});

export const handler = jsonHttpHandler(initiateCreditTransfer(withValueDateHorizon));
