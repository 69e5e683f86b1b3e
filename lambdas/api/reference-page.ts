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
 * Request samples: curl, which the renderer writes from the document, and the document's own
 * (`x-codeSamples`: the TypeScript SDK). Every other generated client is hidden: they are not this
 * project's, and a reader should meet one way to call each operation in each language.
 */
const HIDDEN_CLIENTS = {
  c: true,
  clojure: true,
  csharp: true,
  dart: true,
  fsharp: true,
  go: true,
  http: true,
  java: true,
  js: true,
  julia: true,
  kotlin: true,
  node: true,
  objc: true,
  ocaml: true,
  php: true,
  powershell: true,
  python: true,
  r: true,
  ruby: true,
  rust: true,
  shell: ['httpie', 'wget'],
  swift: true,
};

/**
 * The renderer truncates an operation's path in the header of its request sample. Instead the
 * header wraps: a long path (`/v1/payments/credit-transfers/{paymentId}/status`) takes the whole
 * first line and the sample picker moves below it; a path longer than the card still wraps.
 *
 * Code lines wrap instead of scrolling out of sight (the renderer writes samples, examples and
 * Markdown code unwrapped in a box of fixed width): a wrapped line hangs under its own text, its
 * line number stays at its first row, so the numbers still count the lines as copied.
 */
const CUSTOM_CSS = `
.request-card .scalar-card-header { flex-wrap: wrap; row-gap: 2px; }
.request-card .scalar-card-header > :last-child { margin-left: auto; }
.request-card .scalar-card-header-title {
  flex: 1 1 auto; white-space: normal; overflow: visible; text-overflow: clip; overflow-wrap: anywhere;
}
.scalar-app pre, .scalar-app pre * {
  white-space: pre-wrap !important; text-wrap: wrap !important; overflow-wrap: anywhere;
}
.scalar-app pre { width: auto !important; max-width: 100%; }
.scalar-app .hljs .line {
  display: block;
  padding-left: calc(var(--line-digits) * 1ch + .875rem);
  text-indent: calc(-1 * (var(--line-digits) * 1ch + .875rem));
}
.scalar-app .hljs .line:before { text-indent: 0; }
`;

/**
 * The renderer's settings: every operation shown open, its curl sample first (the one every reader
 * can run as it is; the SDK's is one click away), the auth panel on the client credentials flow
 * (a client id and secret, and the page fetches the token itself; the operations' first security
 * requirement names it too, but the page's own panel reads only this), and none of its hosted
 * extras (fonts, AI agent, MCP, developer tools, telemetry), which would call services elsewhere.
 */
export const RENDERER_CONFIGURATION = {
  defaultOpenAllTags: true,
  defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
  authentication: { preferredSecurityScheme: 'OAuth-2.0-client-credentials' },
  withDefaultFonts: false,
  hideClientButton: true,
  hiddenClients: HIDDEN_CLIENTS,
  customCss: CUSTOM_CSS,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  telemetry: false,
};

/**
 * The page's icon, inline: no browser asks for `/favicon.ico`, which on AWS would go to the
 * origin above the stage, where nothing answers. A bank building in the API's green.
 */
const ICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E" +
  "%3Cpath fill='%23127a4a' d='M8 1 1 5h14zM2 6h2v6H2zm5 0h2v6H7zm5 0h2v6h-2zM1 13h14v2H1z'/%3E%3C/svg%3E";

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
<link rel="icon" href="${ICON}">
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
