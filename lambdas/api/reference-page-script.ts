import { Readable } from 'node:stream';
import middy, { type MiddlewareObj } from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { problemResponses } from '#shared/middleware';
import { observedHttp } from '#shared/observability';
import { REFERENCE_RENDERER, readStaticAsset } from '#shared/static-asset';

// Read at the cold start, as bytes: a function built without its asset fails then, not on a
// request, and 4.3 MB of JavaScript is never decoded into a string (40-50 ms of a cold start).
const script = readStaticAsset(REFERENCE_RENDERER);

/** The answer's body as a stream: Lambda's response stream passes bytes on as they are. */
type StreamedResult = Omit<APIGatewayProxyResult, 'body'> & { body: Readable };

/**
 * GET /docs/scalar.js: the reference page's renderer, a static file beside this function's code.
 * Streamed (API Gateway's STREAM transfer mode): a returned body would have to be a string, or
 * base64 that a REST API turns back into bytes only for its binary media types.
 */
export const getReferencePageScript = async (): Promise<StreamedResult> => ({
  statusCode: 200,
  headers: {
    'Content-Type': REFERENCE_RENDERER.contentType,
    // Changes only with a deployment; a day keeps repeat visits off the function.
    'Cache-Control': 'public, max-age=86400',
    'X-Content-Type-Options': 'nosniff',
  },
  body: Readable.from([script]),
});

/** A problem answer (a string body) or the script (a stream): middy streams either. */
type Answer = APIGatewayProxyResult | StreamedResult;

export const handler = middy<APIGatewayProxyEvent, Answer>({ executionMode: executionModeStreamifyResponse })
  .use(observedHttp() as MiddlewareObj<APIGatewayProxyEvent, Answer>[])
  .use(problemResponses() as MiddlewareObj<APIGatewayProxyEvent, Answer>)
  .handler(getReferencePageScript);
