import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { InvalidRequestError } from '#domain/commons/errors';

/** What the authorizer hands to every /v1 handler through the request context. */
export interface Caller {
  tenant: string;
  clientId: string;
}

/** Header lookup ignoring case: API Gateway keeps the client's spelling, Node lower-cases. */
export const headerValue = (
  event: Pick<APIGatewayProxyEvent, 'headers'>,
  name: string,
): string | undefined => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted) return value ?? undefined;
  }
  return undefined;
};

/**
 * Headers a request may carry once. Sent twice, even with one value, the request is refused:
 * proxies and servers disagree on which of two values counts (Node keeps the first
 * Authorization, API Gateway the last), so a repeat is ambiguous or an attempt to smuggle one
 * value past a check of the other.
 */
export const SINGLE_VALUE_HEADERS = [
  'Authorization',
  'Content-Type',
  'Content-Length',
  'Content-Encoding',
  'idempotencyId',
  'Idempotency-Key',
  'servicerId',
  'servicerBranchId',
] as const;

/** Every value sent under the name, in any letter case: the multi-value map holds them all. */
const headerValues = (event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>, name: string) => {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, list] of Object.entries(event.multiValueHeaders ?? {})) {
    if (key.toLowerCase() === wanted) values.push(...(list ?? []));
  }
  return values;
};

/** A header the request may carry once: its value, or a 400 naming it when it is sent more than once. */
export const singleHeaderValue = (
  event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>,
  name: string,
): string | undefined => {
  const values = headerValues(event, name);
  if (values.length > 1) {
    throw new InvalidRequestError('A request header is repeated', [{ name, reason: 'must be sent once' }]);
  }
  return values[0] ?? headerValue(event, name);
};

export const callerOf = (event: APIGatewayProxyEvent): Caller => {
  const context = event.requestContext.authorizer ?? {};
  const { tenant, clientId } = context as Record<string, unknown>;
  if (typeof tenant !== 'string' || typeof clientId !== 'string') {
    // The authorizer always sets both; their absence is a wiring fault, not a client error.
    throw new Error('Request reached a handler without an authorized caller');
  }
  return { tenant, clientId };
};

export const jsonResponse = (
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers },
  body: JSON.stringify(body),
});
