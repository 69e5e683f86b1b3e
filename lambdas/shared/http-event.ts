import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

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

/**
 * What precedes the resource path in the URL the client called: `/live` on the stage's
 * execute-api URL, a base path behind a custom domain, nothing locally.
 */
export const basePathOf = (event: Pick<APIGatewayProxyEvent, 'path' | 'requestContext'>): string => {
  const requested = event.requestContext.path ?? '';
  return requested.endsWith(event.path) ? requested.slice(0, requested.length - event.path.length) : '';
};
