import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '#domain/access/scopes';
import { ROUTES } from '#routes';
import { muteLogger } from './fakes.ts';

/**
 * On AWS the authorizer lets a verified token through to every protected route, and API Gateway
 * invokes the route's function: these are those functions, called as API Gateway calls them, with
 * a token that holds every scope but the route's own.
 */
type LambdaHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PROTECTED = ROUTES.filter((route) => route.scope !== undefined);

const proxyEvent = (
  route: (typeof ROUTES)[number],
  scope: string,
  authorization = 'Bearer eyJ.eyJ.sig',
): APIGatewayProxyEvent =>
  ({
    resource: route.path,
    path: route.path.replace(/\{[^}]+\}/g, 'p-1'),
    httpMethod: route.method,
    headers: { Authorization: authorization, 'Content-Type': 'application/json' },
    multiValueHeaders: { Authorization: [authorization], 'Content-Type': ['application/json'] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: '{}',
    isBase64Encoded: false,
    requestContext: {
      authorizer: { tenant: 'acme', clientId: 'acme-payments', scope, principalId: 'acme-payments' },
      httpMethod: route.method,
      resourcePath: route.path,
      path: route.path,
      stage: 'live',
      requestId: 'r-1',
      identity: { sourceIp: '192.0.2.1' },
    },
  }) as unknown as APIGatewayProxyEvent;

const context = { getRemainingTimeInMillis: () => 10_000, awsRequestId: 'r-1' } as unknown as Context;

const handlerOf = async (entry: string): Promise<LambdaHandler> =>
  ((await import(pathToFileURL(join(process.cwd(), entry)).href)) as { handler: LambdaHandler }).handler;

beforeAll(() => {
  muteLogger();
});

describe('every protected route, as its Lambda function is invoked on AWS', () => {
  it.each(PROTECTED.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s refuses a token without its scope, naming the scope',
    async (_, route) => {
      const others = SCOPES.filter((scope) => scope !== route.scope).join(' ');
      const reply = await (await handlerOf(route.entry))(proxyEvent(route, others), context);

      expect(reply.statusCode).toBe(403);
      expect(reply.headers?.['WWW-Authenticate']).toBe(
        `Bearer realm="credit-transfers", error="insufficient_scope", scope="${route.scope}", error_description="The access token does not carry the scope ${route.scope}"`,
      );
      expect(reply.headers?.['Content-Type']).toBe('application/problem+json');
      const body = JSON.parse(reply.body) as Record<string, unknown>;
      expect(body).toMatchObject({
        status: 403,
        error: 'insufficient_scope',
        error_description: `The access token does not carry the scope ${route.scope}`,
        detail: `The access token does not carry the scope ${route.scope}`,
      });
    },
  );

  it('names DPoP as the scheme when the token was sent as DPoP (RFC 9449 7.1)', async () => {
    const route = PROTECTED.find((candidate) => candidate.operationId === 'initiateCreditTransfer');
    if (route === undefined) throw new Error('no initiation route');
    const reply = await (await handlerOf(route.entry))(
      proxyEvent(route, 'transactions:read', 'DPoP eyJ.eyJ.sig'),
      context,
    );

    expect(reply.statusCode).toBe(403);
    expect(reply.headers?.['WWW-Authenticate']).toMatch(
      /^DPoP realm="credit-transfers", error="insufficient_scope", scope="transactions:write"/,
    );
  });

  it('refuses a request that reached a handler without any scope', async () => {
    const route = PROTECTED[0];
    if (route === undefined) throw new Error('no protected route');
    const reply = await (await handlerOf(route.entry))(proxyEvent(route, ''), context);

    expect(reply.statusCode).toBe(403);
  });
});
