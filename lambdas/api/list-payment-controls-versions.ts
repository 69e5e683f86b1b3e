import type { APIGatewayProxyEvent } from 'aws-lambda';
import { listPaymentControlsVersions as list } from '#domain/payment-controls/manage-payment-controls';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { paymentControlsDependencies } from './payment-controls-dependencies.ts';
import { queryParameters } from './query-string.ts';

export const listPaymentControlsVersions = async (event: APIGatewayProxyEvent) => {
  const { tenant } = callerOf(event);
  return jsonResponse(200, await list(paymentControlsDependencies(), tenant, queryParameters(event)));
};

export const handler = httpHandler(listPaymentControlsVersions);
