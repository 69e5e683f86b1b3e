import type { APIGatewayProxyResult } from 'aws-lambda';
import { httpHandler } from '#shared/http-handler';

/**
 * What the page may do: its own script (the renderer at docs/scalar.js), fetch and try requests
 * against this origin only, and inline styles, which the renderer sets on its elements at run time.
 * Nothing from anywhere else: no CDN, fonts, frames or form posts.
 */
export const REFERENCE_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The renderer's settings: every operation shown open, and none of its hosted extras (fonts,
 * AI agent, MCP, developer tools, telemetry), which would call services elsewhere.
 */
const RENDERER_CONFIGURATION = {
  defaultOpenAllTags: true,
  withDefaultFonts: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  telemetry: false,
};

const escapeAttribute = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * Relative URLs: the page is served at `docs` next to `openapi.json`, so both resolve under
 * whatever base path the client called (a stage, a custom domain's base path, nothing locally).
 */
export const REFERENCE_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Credit transfers API reference</title>
</head>
<body>
<script id="api-reference" data-url="openapi.json" data-configuration="${escapeAttribute(JSON.stringify(RENDERER_CONFIGURATION))}"></script>
<script src="docs/scalar.js"></script>
</body>
</html>
`;

/** GET /docs: the API reference, rendered in the browser by Scalar from /openapi.json. */
export const getReferencePage = async (): Promise<APIGatewayProxyResult> => ({
  statusCode: 200,
  headers: {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': REFERENCE_PAGE_CSP,
    'Cache-Control': 'public, max-age=300',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  },
  body: REFERENCE_PAGE_HTML,
});

export const handler = httpHandler(getReferencePage);
