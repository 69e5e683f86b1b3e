import type { APIGatewayProxyResult } from 'aws-lambda';
import { httpHandler } from '#shared/http-handler';
// The committed document (npm run openapi writes it, npm run openapi:check keeps it current):
// bundled as data, so no function carries the generator.
import document from '../../openapi/openapi.json' with { type: 'json' };

const body = JSON.stringify(document);

/** GET /openapi.json: the OpenAPI 3.1 document. */
export const getOpenApiDocument = async (): Promise<APIGatewayProxyResult> => ({
  statusCode: 200,
  headers: {
    'Content-Type': 'application/json',
    'Cache-Control': 'public, max-age=300',
    'X-Content-Type-Options': 'nosniff',
  },
  body,
});

export const handler = httpHandler(getOpenApiDocument);
