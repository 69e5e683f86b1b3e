import { Readable } from 'node:stream';
import { type StreamedResult, streamingHttpHandler } from '#shared/http-handler';
import { REFERENCE_RENDERER, readStaticAsset } from '#shared/static-asset';

// Read at the cold start, as bytes: a function built without its asset fails then, not on a
// request, and 4.3 MB of JavaScript is never decoded into a string (5 to 50 ms of a cold start,
// by machine).
const script = readStaticAsset(REFERENCE_RENDERER);

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

export const handler = streamingHttpHandler(getReferencePageScript);
