import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { deadlineBound } from './deadline.ts';
import { type JsonEvent, jsonBody, problemResponses, unambiguousRequest } from './middleware.ts';
import { observedHttp } from './observability.ts';
import { requiredScope } from './required-scope.ts';

type Handler<E> = (event: E) => Promise<APIGatewayProxyResult>;

/**
 * The middleware every HTTP handler shares: observability outermost, then problem mapping,
 * which runs before the request log on the way out, then the route's scope.
 */
export const httpHandler = (handler: Handler<APIGatewayProxyEvent>) =>
  deadlineBound(
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(observedHttp())
      .use(problemResponses())
      .use(requiredScope())
      .use(unambiguousRequest())
      .handler(handler),
  );

/** As httpHandler, for operations with a JSON body (`optional` when it may be absent). */
export const jsonHttpHandler = (handler: Handler<JsonEvent>, options: { optional?: boolean } = {}) =>
  deadlineBound(
    middy<JsonEvent, APIGatewayProxyResult>()
      .use(observedHttp<JsonEvent>())
      .use(problemResponses<JsonEvent>())
      .use(requiredScope<JsonEvent>())
      .use(unambiguousRequest<JsonEvent>())
      .use(jsonBody(options))
      .handler(handler),
  );
