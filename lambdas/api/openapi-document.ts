import type { APIGatewayProxyResult } from 'aws-lambda';
import { publicUrl } from '#shared/config';
import { httpHandler } from '#shared/http-handler';
// The committed document (npm run openapi writes it, npm run openapi:check keeps it current):
// bundled as data, so no function carries the generator.
import document from '../../openapi/openapi.json' with { type: 'json' };

type Json = null | boolean | number | string | Json[] | JsonObject;
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The paths without the operations marked `x-internal` (the reference page and its script):
 * they stay in the committed contract, which the tests check responses against, but an
 * integrator reading the document or the page meets only the API.
 */
export const publicPaths = (paths: JsonObject): JsonObject => {
  const kept: JsonObject = {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) {
      kept[path] = item;
      continue;
    }
    const operations = Object.entries(item).filter(
      ([, operation]) => !(isObject(operation) && operation['x-internal']),
    );
    if (operations.length > 0) kept[path] = Object.fromEntries(operations);
  }
  return kept;
};

/** A string as it is written inside a JSON string literal. */
const inJsonString = (text: string): string => JSON.stringify(text).slice(1, -1);

/**
 * The document as served: its one server is the configured public URL (PUBLIC_URL), an absolute
 * URL that request samples and client generators can use as it is. Never the request's Host.
 * The committed document writes that URL as its server variable (`{publicUrl}`), in the server
 * and in the examples and code samples: each becomes the configured URL.
 */
export const servedDocument = (baseUrl: string): string => {
  const [template] = document.servers;
  if (template === undefined) throw new Error('The OpenAPI document names no server');
  const { securitySchemes } = document.components;
  const clientCredentialsScheme = securitySchemes['OAuth-2.0-client-credentials'];
  const { clientCredentials } = clientCredentialsScheme.flows;
  const served = {
    ...document,
    servers: document.servers.map(({ description, 'x-internal': internal }) => ({
      url: baseUrl,
      description,
      'x-internal': internal,
    })),
    paths: publicPaths(document.paths as unknown as JsonObject),
    components: {
      ...document.components,
      securitySchemes: {
        ...securitySchemes,
        // Absolute too: a relative token URL would resolve against the server's origin, not its path.
        'OAuth-2.0-client-credentials': {
          ...clientCredentialsScheme,
          flows: { clientCredentials: { ...clientCredentials, tokenUrl: `${baseUrl}/oauth/token` } },
        },
      },
    },
  };
  // Replaced in the serialized text, in one pass: a walk rebuilding every node cost the cold start more.
  const url = inJsonString(baseUrl);
  return JSON.stringify(served).replaceAll(inJsonString(template.url), () => url);
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
