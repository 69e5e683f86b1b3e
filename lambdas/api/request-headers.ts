import type { APIGatewayProxyEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { idempotencyKeySchema, type ServicerHeaders, servicerHeadersSchema } from '#domain/credit-transfer';
import { InvalidRequestError } from '#domain/errors';
import { parseOrThrow } from '#domain/validation';
import { headerValue } from '#shared/http-event';

/**
 * A header the request may carry once: every value sent under the name in any letter case.
 * Repeated with one value it is that value; with different values the request is ambiguous.
 */
const singleHeader = (event: APIGatewayProxyEvent, name: string): string | undefined => {
  const wanted = name.toLowerCase();
  const values = new Set<string>();
  for (const [key, list] of Object.entries(event.multiValueHeaders ?? {})) {
    if (key.toLowerCase() === wanted) for (const value of list ?? []) values.add(value);
  }
  if (values.size > 1) {
    throw new InvalidRequestError('A request header is not valid', [
      { name, reason: 'is sent more than once with different values' },
    ]);
  }
  return values.size === 1 ? [...values][0] : headerValue(event, name);
};

export const servicerHeaders = (event: APIGatewayProxyEvent): ServicerHeaders =>
  parseOrThrow(
    servicerHeadersSchema,
    {
      servicerId: singleHeader(event, 'servicerId'),
      servicerBranchId: singleHeader(event, 'servicerBranchId'),
    },
    'A request header is not valid',
  );

const optionalKey = z.optional(idempotencyKeySchema);

/** The idempotency key from `idempotencyId` (the spec's name) or `Idempotency-Key`; both must agree. */
export const idempotencyKey = (event: APIGatewayProxyEvent): string | undefined => {
  const fromSpecHeader = parseOrThrow(
    optionalKey,
    singleHeader(event, 'idempotencyId'),
    'A request header is not valid',
    ['idempotencyId'],
  );
  const fromStandardHeader = parseOrThrow(
    optionalKey,
    singleHeader(event, 'Idempotency-Key'),
    'A request header is not valid',
    ['Idempotency-Key'],
  );
  if (
    fromSpecHeader !== undefined &&
    fromStandardHeader !== undefined &&
    fromSpecHeader !== fromStandardHeader
  ) {
    throw new InvalidRequestError('A request header is not valid', [
      { name: 'Idempotency-Key', reason: 'differs from idempotencyId; send one of them' },
    ]);
  }
  return fromSpecHeader ?? fromStandardHeader;
};
