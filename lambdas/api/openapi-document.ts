import type { APIGatewayProxyResult } from 'aws-lambda';
import { httpHandler } from '#shared/http-handler';
import { openApiDocument } from '#shared/openapi';

let body: string | undefined;

/** GET /openapi.json: the OpenAPI 3.1 document, built once per container. */
export const getOpenApiDocument = async (): Promise<APIGatewayProxyResult> => {
  body ??= JSON.stringify(openApiDocument());
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'application/json',
      'Cache-Control': 'public, max-age=300',
      'X-Content-Type-Options': 'nosniff',
    },
    body,
  };
};

export const handler = httpHandler(getOpenApiDocument);
