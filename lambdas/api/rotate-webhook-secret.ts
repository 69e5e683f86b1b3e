import { webhookSecrets } from '#adapters/webhooks/webhook-secrets';
import { InvalidRequestError } from '#domain/commons/errors';
import { rotateWebhookSecret as rotate } from '#domain/webhooks/webhook-endpoints';
import { callerOf, jsonResponse } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { webhookDependencies } from './webhook-dependencies.ts';

/** No body, or `{}`: a rotation takes no options. */
const assertEmptyOptions = (body: unknown): void => {
  const empty =
    body === undefined ||
    (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0);
  if (!empty) {
    throw new InvalidRequestError('The secret rotation takes no options', [
      { name: '(body)', reason: 'must be absent or {}' },
    ]);
  }
};

export const rotateWebhookSecret = async (event: JsonEvent) => {
  const { tenant } = callerOf(event);
  assertEmptyOptions(event.jsonBody);
  return jsonResponse(
    200,
    await rotate({ ...webhookDependencies(), sealer: webhookSecrets() }, tenant, event.pathParameters?.id),
  );
};

export const handler = jsonHttpHandler(rotateWebhookSecret, { optional: true });
