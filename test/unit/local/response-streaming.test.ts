import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '#routes';
import { REFERENCE_RENDERER } from '#shared/static-asset';
import {
  bufferedProxyHandler,
  gatewayHandler,
  installResponseStreaming,
  isStreamingHandler,
} from '../../../scripts/local/response-streaming.ts';
import { muteLogger } from '../auth/fakes.ts';

const RENDERER = join(process.cwd(), REFERENCE_RENDERER.source);

const event = {
  httpMethod: 'GET',
  path: '/docs/scalar.js',
  resource: '/docs/scalar.js',
  headers: {},
  requestContext: { requestId: 'r-1', httpMethod: 'GET', resourcePath: '/docs/scalar.js' },
} as unknown as APIGatewayProxyEvent;
const context = { awsRequestId: 'r-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

beforeAll(() => {
  muteLogger();
  // As the Lambda runtime has it before the handler's module is evaluated.
  installResponseStreaming();
});

describe('the reference page script, a streaming handler', () => {
  it('streams the renderer byte for byte after an HTTP prelude with its headers', async () => {
    const { handler } = await import('../../../lambdas/api/reference-page-script.ts');
    if (!isStreamingHandler(handler)) throw new Error('not marked as a streaming handler');

    const answer = await bufferedProxyHandler(handler)(event, context);

    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toEqual({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=86400',
      'X-Content-Type-Options': 'nosniff',
    });
    expect(answer.isBase64Encoded).toBe(true);
    expect(Buffer.from(answer.body, 'base64').equals(readFileSync(RENDERER))).toBe(true);
  });

  it('refuses an ambiguous request with the error body, as every HTTP handler does, streamed as well', async () => {
    const { handler } = await import('../../../lambdas/api/reference-page-script.ts');
    if (!isStreamingHandler(handler)) throw new Error('not marked as a streaming handler');

    const answer = await bufferedProxyHandler(handler)(
      {
        ...event,
        queryStringParameters: { v: '\ud800' },
        multiValueQueryStringParameters: { v: ['\ud800'] },
      },
      context,
    );

    expect(answer.statusCode).toBe(400);
    expect(answer.headers?.['Content-Type']).toBe('application/problem+json');
    const problem = JSON.parse(Buffer.from(answer.body, 'base64').toString('utf8'));
    expect(problem).toMatchObject({ status: 400, invalidParams: [{ name: 'v' }] });
  });

  it('refuses an answer streamed without its prelude, rather than sending a body without a status', async () => {
    const bare = (globalThis as unknown as { awslambda: typeof awslambda }).awslambda.streamifyResponse(
      async (_event, responseStream) => {
        responseStream.end('console.log(1)');
      },
    );
    await expect(bufferedProxyHandler(bare as never)(event, context)).rejects.toThrow(/prelude/);
  });
});

describe('a route and its handler agree on streaming, or the local runtime refuses to start', () => {
  const streamedRoute = ROUTES.find((route) => route.streamed);
  const plainRoute = ROUTES.find((route) => !route.streamed);
  if (!streamedRoute || !plainRoute) throw new Error('the route table has no streamed or no plain route');
  const plainHandler = async () => ({ statusCode: 200, body: '' });

  it('invokes the streamed route through its streaming handler', async () => {
    const { handler } = await import('../../../lambdas/api/reference-page-script.ts');
    const answer = await gatewayHandler(streamedRoute, handler)(event, context);
    expect(answer.statusCode).toBe(200);
  });

  it('refuses a streamed route whose handler does not stream, naming both', async () => {
    expect(() => gatewayHandler(streamedRoute, plainHandler)).toThrow(
      `${streamedRoute.operationId}: the route is streamed but its handler (${streamedRoute.entry}) is not a streaming one`,
    );
  });

  it('refuses a streaming handler behind a route that is not streamed', async () => {
    const { handler } = await import('../../../lambdas/api/reference-page-script.ts');
    expect(() => gatewayHandler(plainRoute, handler)).toThrow(
      `${plainRoute.operationId}: the route is not streamed but its handler (${plainRoute.entry}) is a streaming one`,
    );
  });
});
