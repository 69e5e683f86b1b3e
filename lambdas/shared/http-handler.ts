import type { Readable } from 'node:stream';
import middy, { type MiddlewareObj } from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { deadlineBound } from './deadline.ts';
import { type JsonEvent, jsonBody, problemResponses, unambiguousRequest } from './middleware.ts';
import { observedHttp } from './observability.ts';
import { requiredScope } from './required-scope.ts';

type Handler<E> = (event: E) => Promise<APIGatewayProxyResult>;

/**
 * The middleware every HTTP handler shares, in order: observability outermost, then problem
 * mapping, which runs before the request log on the way out, then the route's scope, then the
 * refusal of ambiguous requests. One list, so no kind of handler can miss one.
 */
const sharedHttpMiddleware = <E extends APIGatewayProxyEvent>(): MiddlewareObj<
  E,
  APIGatewayProxyResult
>[] => [...observedHttp<E>(), problemResponses<E>(), requiredScope<E>(), unambiguousRequest<E>()];

export const httpHandler = (handler: Handler<APIGatewayProxyEvent>) =>
  deadlineBound(
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>().use(sharedHttpMiddleware()).handler(handler),
  );

/** As httpHandler, for operations with a JSON body (`optional` when it may be absent). */
export const jsonHttpHandler = (handler: Handler<JsonEvent>, options: { optional?: boolean } = {}) =>
  deadlineBound(
    middy<JsonEvent, APIGatewayProxyResult>()
      .use(sharedHttpMiddleware<JsonEvent>())
      .use(jsonBody(options))
      .handler(handler),
  );

/** An answer whose body is a stream: Lambda's response stream passes its bytes on as they are. */
export type StreamedResult = Omit<APIGatewayProxyResult, 'body'> & { body: Readable };

/** A problem answer (a string body) or a streamed one: middy streams either. */
type StreamedAnswer = APIGatewayProxyResult | StreamedResult;

/**
 * As httpHandler, for a streamed route (routes.ts, `streamed`): the same middleware, the answer
 * written to Lambda's response stream. It makes no AWS call, so it has no deadline to keep.
 */
export const streamingHttpHandler = (handler: (event: APIGatewayProxyEvent) => Promise<StreamedResult>) =>
  middy<APIGatewayProxyEvent, StreamedAnswer>({ executionMode: executionModeStreamifyResponse })
    // Typed for string bodies, it only reads the status or sets a problem answer.
    .use(sharedHttpMiddleware() as MiddlewareObj<APIGatewayProxyEvent, StreamedAnswer>[])
    .handler(handler);
