import type { APIGatewayProxyEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { InvalidRequestError } from '#domain/commons/errors';
import { parseOrThrow } from '#domain/commons/validation';
import {
  idempotencyKeySchema,
  type ServicerHeaders,
  servicerHeadersSchema,
} from '#domain/credit-transfers/credit-transfer';
import { singleHeaderValue } from '#shared/http-event';

export const servicerHeaders = (event: APIGatewayProxyEvent): ServicerHeaders =>
  parseOrThrow(
    servicerHeadersSchema,
    {
      servicerId: singleHeaderValue(event, 'servicerId'),
      servicerBranchId: singleHeaderValue(event, 'servicerBranchId'),
    },
    'A request header is not valid',
  );

const optionalKey = z.optional(idempotencyKeySchema);

/** The idempotency key from `idempotencyId` (the spec's name) or `Idempotency-Key`; both must agree. */
export const idempotencyKey = (event: APIGatewayProxyEvent): string | undefined => {
  const fromSpecHeader = parseOrThrow(
    optionalKey,
    singleHeaderValue(event, 'idempotencyId'),
    'A request header is not valid',
    ['idempotencyId'],
  );
  const fromStandardHeader = parseOrThrow(
    optionalKey,
    singleHeaderValue(event, 'Idempotency-Key'),
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
