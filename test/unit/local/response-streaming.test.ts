import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_RENDERER } from '#shared/static-asset';
import {
  bufferedProxyHandler,
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
