import type { APIGatewayProxyResult } from 'aws-lambda';
import { httpHandler } from '#shared/http-handler';
import { type OpenApiDocument, renderReferencePage } from '#shared/reference-page-html';
import document from '../../openapi/openapi.json' with { type: 'json' };

/** Inline styles only: the page loads no script, font, image or stylesheet. */
export const REFERENCE_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'";

let page: string | undefined;

/** GET /docs: the API reference, rendered once per container from the OpenAPI document. */
export const getReferencePage = async (): Promise<APIGatewayProxyResult> => {
  page ??= renderReferencePage(document as unknown as OpenApiDocument);
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': REFERENCE_PAGE_CSP,
      'Cache-Control': 'public, max-age=300',
      'X-Content-Type-Options': 'nosniff',
    },
    body: page,
  };
};

export const handler = httpHandler(getReferencePage);
