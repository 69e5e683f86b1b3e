import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { logger } from './logger.ts';
import { type JsonEvent, jsonBody, problemResponses, unambiguousRequest } from './middleware.ts';

type Handler<E> = (event: E) => Promise<APIGatewayProxyResult>;

/** The middleware every HTTP handler shares; problem mapping is the last to run on the way out. */
export const httpHandler = (handler: Handler<APIGatewayProxyEvent>) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger, { clearState: true }))
    .use(problemResponses())
    .use(unambiguousRequest())
    .handler(handler);

/** As httpHandler, for operations with a JSON body (`optional` when it may be absent). */
export const jsonHttpHandler = (handler: Handler<JsonEvent>, options: { optional?: boolean } = {}) =>
  middy<JsonEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger, { clearState: true }))
    .use(problemResponses<JsonEvent>())
    .use(unambiguousRequest<JsonEvent>())
    .use(jsonBody(options))
    .handler(handler);
