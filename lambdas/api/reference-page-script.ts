import type { APIGatewayProxyResult } from 'aws-lambda';
import { httpHandler } from '#shared/http-handler';
import { REFERENCE_RENDERER, readStaticAsset } from '#shared/static-asset';

// Read at the cold start: a function built without its asset fails then, not on a request.
const script = readStaticAsset(REFERENCE_RENDERER).toString('utf8');

/** GET /docs/scalar.js: the reference page's renderer, a static file beside this function's code. */
export const getReferencePageScript = async (): Promise<APIGatewayProxyResult> => ({
  statusCode: 200,
  headers: {
    'Content-Type': REFERENCE_RENDERER.contentType,
    // Changes only with a deployment; a day keeps repeat visits off the function.
    'Cache-Control': 'public, max-age=86400',
    'X-Content-Type-Options': 'nosniff',
  },
  body: script,
});

export const handler = httpHandler(getReferencePageScript);
