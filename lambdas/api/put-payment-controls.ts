import { putPaymentControls as put } from '#domain/payment-controls/manage-payment-controls';
import { callerOf, jsonResponse, singleHeaderValue } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { paymentControlsDependencies } from './payment-controls-dependencies.ts';

export const putPaymentControls = async (event: JsonEvent) => {
  const { tenant, clientId } = callerOf(event);
  const ifMatch = singleHeaderValue(event, 'If-Match');
  const { controls, etag } = await put(paymentControlsDependencies(), {
    tenant,
    clientId,
    body: event.jsonBody,
    ...(ifMatch !== undefined && { ifMatch }),
  });
  return jsonResponse(200, controls, { ETag: etag });
};

export const handler = jsonHttpHandler(putPaymentControls);
