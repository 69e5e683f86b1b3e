import type { APIGatewayProxyResult } from 'aws-lambda';
import { publicUrl } from '#shared/config';
import { httpHandler } from '#shared/http-handler';
// The committed document (npm run openapi writes it, npm run openapi:check keeps it current):
// bundled as data, so no function carries the generator.
import document from '../../openapi/openapi.json' with { type: 'json' };

/**
 * The document as served: its one server is the configured public URL (PUBLIC_URL), an absolute
 * URL that request samples and client generators can use as it is. Never the request's Host.
 */
export const servedDocument = (baseUrl: string): string => {
  const { securitySchemes } = document.components;
  const { clientCredentials } = securitySchemes.oauth2.flows;
  return JSON.stringify({
    ...document,
    servers: document.servers.map(({ description, 'x-internal': internal }) => ({
      url: baseUrl,
      description,
      'x-internal': internal,
    })),
    components: {
      ...document.components,
      securitySchemes: {
        ...securitySchemes,
        // Absolute too: a relative token URL would resolve against the server's origin, not its path.
        oauth2: {
          ...securitySchemes.oauth2,
          flows: { clientCredentials: { ...clientCredentials, tokenUrl: `${baseUrl}/oauth/token` } },
        },
      },
    },
  });
};

let served: { baseUrl: string; body: string } | undefined;

/** GET /openapi.json: the OpenAPI 3.1 document, the same for every request (so cacheable, no `Vary`). */
export const getOpenApiDocument =
  (baseUrl: () => string = publicUrl) =>
  async (): Promise<APIGatewayProxyResult> => {
    const url = baseUrl();
    if (served?.baseUrl !== url) served = { baseUrl: url, body: servedDocument(url) };
    return {
      statusCode: 200,
      headers: {
        'Content-Type': 'application/json',
        'Cache-Control': 'public, max-age=300',
        'X-Content-Type-Options': 'nosniff',
      },
      body: served.body,
    };
  };

export const handler = httpHandler(getOpenApiDocument());
