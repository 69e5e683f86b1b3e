import type { APIGatewayProxyEvent } from 'aws-lambda';
import { getPaymentControls as get } from '#domain/payment-controls/manage-payment-controls';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { paymentControlsDependencies } from './payment-controls-dependencies.ts';

export const getPaymentControls = async (event: APIGatewayProxyEvent) => {
  const { tenant } = callerOf(event);
  const { controls, etag } = await get(paymentControlsDependencies(), tenant);
  return jsonResponse(200, controls, { ETag: etag });
};

export const handler = httpHandler(getPaymentControls);
