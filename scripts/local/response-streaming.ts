import { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ProxyHandler } from './api-gateway.ts';

/**
 * Lambda response streaming on one machine. On AWS the Node.js runtime provides the global
 * `awslambda`: `streamifyResponse` marks a handler that writes its answer to a stream, and
 * `HttpResponseStream.from` begins that stream with the HTTP metadata API Gateway reads (a JSON
 * prelude, then 8 zero bytes, then the body's bytes as they are). The local runtime installs the
 * same two calls before it loads a handler, and its gateway reads such an answer whole.
 */

type StreamingHandler = (event: unknown, responseStream: Writable, context: Context) => Promise<void>;

/** How the runtime marks a streaming handler (the Lambda Node.js runtime's own symbol). */
const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
const RESPONSE_STREAMING = 'response';
/** Between the prelude and the body, as API Gateway and function URLs expect it. */
const DELIMITER = Buffer.alloc(8);

interface ResponsePrelude {
  statusCode?: number;
  headers?: Record<string, string>;
}

const localAwsLambda = {
  streamifyResponse: <H extends StreamingHandler>(handler: H): H =>
    Object.assign(handler, { [STREAMING]: RESPONSE_STREAMING }),
  HttpResponseStream: {
    from: (responseStream: Writable, prelude: ResponsePrelude): Writable => {
      responseStream.write(JSON.stringify(prelude));
      responseStream.write(DELIMITER);
      return responseStream;
    },
  },
};

/**
 * Gives `awslambda` the two calls as the Lambda runtime has them, unless it has them already. The
 * object may exist without them: AWS's invoke store (under Powertools) creates an empty one.
 */
export const installResponseStreaming = (): void => {
  const global = globalThis as unknown as { awslambda?: Partial<typeof localAwsLambda> };
  global.awslambda ??= {};
  global.awslambda.streamifyResponse ??= localAwsLambda.streamifyResponse;
  global.awslambda.HttpResponseStream ??= localAwsLambda.HttpResponseStream;
};

export const isStreamingHandler = (handler: unknown): handler is StreamingHandler =>
  typeof handler === 'function' && (handler as { [STREAMING]?: unknown })[STREAMING] === RESPONSE_STREAMING;

/**
 * A route's handler as the gateway invokes it. A streamed route (API Gateway's STREAM transfer
 * mode) must have a streaming handler and no other route may: a mismatch would fail every request
 * of that route on AWS, so the start is refused.
 */
export const gatewayHandler = (
  route: { operationId: string; entry: string; streamed?: boolean },
  handler: unknown,
): ProxyHandler => {
  const streaming = isStreamingHandler(handler);
  if (streaming !== (route.streamed === true)) {
    throw new Error(
      `${route.operationId}: the route is ${route.streamed ? '' : 'not '}streamed but its handler (${route.entry}) is ${streaming ? 'a' : 'not a'} streaming one`,
    );
  }
  return streaming ? bufferedProxyHandler(handler) : (handler as ProxyHandler);
};

/**
 * A streaming handler as a proxy handler: its stream is read to the end, the prelude becomes the
 * status and headers, the bytes after the delimiter the body (base64, so any bytes pass).
 */
export const bufferedProxyHandler =
  (handler: StreamingHandler) =>
  async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    });
    await handler(event, sink, context);
    const answer = Buffer.concat(chunks);
    const end = answer.indexOf(DELIMITER);
    if (end === -1) throw new Error('A streamed answer without its HTTP prelude');
    const prelude = JSON.parse(answer.subarray(0, end).toString('utf8')) as ResponsePrelude;
    return {
      statusCode: prelude.statusCode ?? 200,
      headers: prelude.headers ?? {},
      body: answer.subarray(end + DELIMITER.length).toString('base64'),
      isBase64Encoded: true,
    };
  };
