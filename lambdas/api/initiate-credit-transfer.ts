import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  type InitiationDependencies,
  initiateCreditTransfer as initiate,
} from '#domain/initiate-credit-transfer';
import { callerOf } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import { logger } from '#shared/logger';
import { countTransferInitiated } from '#shared/metrics';
import type { JsonEvent } from '#shared/middleware';
import { acceptedResponse } from './accepted-response.ts';
import { idempotencyKey, servicerHeaders } from './request-headers.ts';
import { initiationDependencies } from './starting-dependencies.ts';

export const initiateCreditTransfer =
  (dependencies: () => InitiationDependencies) =>
  async (event: JsonEvent): Promise<APIGatewayProxyResult> => {
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
    return acceptedResponse(event, creditTransfer, replayed);
  };

export const handler = jsonHttpHandler(initiateCreditTransfer(initiationDependencies));
