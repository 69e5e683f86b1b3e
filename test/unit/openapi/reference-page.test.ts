import { describe, expect, it } from 'vitest';
import { getOpenApiDocument } from '#api/openapi-document';
import { getReferencePage, REFERENCE_PAGE_CSP } from '#api/reference-page';
import { ROUTES } from '#routes';
import { escapeHtml, type OpenApiDocument, renderReferencePage } from '#shared/reference-page-html';
import { buildOpenApiDocument as buildDocument } from '../../../scripts/openapi-document.ts';
import { operationsOf, routesWithLater } from './helpers.ts';

const buildOpenApiDocument = (...routes: Parameters<typeof buildDocument>) =>
  buildDocument(...routes) as unknown as OpenApiDocument;

const fullDocument = buildOpenApiDocument(routesWithLater());
const page = renderReferencePage(fullDocument);

describe('the reference page', () => {
  it('shows every operation with its method, path and operationId', () => {
    const operations = operationsOf(fullDocument);
    expect(operations.length).toBe(routesWithLater().length);
    for (const { method, path, operation } of operations) {
      expect(page, operation.operationId).toContain(`id="operation-${operation.operationId}"`);
      expect(page, operation.operationId).toContain(`<code>${operation.operationId}</code>`);
      expect(page, path).toContain(`<span class="method">${method}</span> <code>${escapeHtml(path)}</code>`);
    }
  });

  it('shows the scope each operation requires', () => {
    expect(page).toContain('<code>transactions:write</code>');
    expect(page).toContain('<code>transactions:read</code>');
    expect(page).toContain('none (public)');
    // The token endpoint: HTTP Basic, or the credentials in the body.
    expect(page).toContain(
      '<dd><code>clientSecretBasic</code> or none of the schemes (see the description)</dd>',
    );
  });

  it('shows parameters with where they go, whether required and their bounds', () => {
    expect(page).toMatch(
      /<tr><td><code>paymentId<\/code><\/td><td>path<\/td><td>yes<\/td><td>string<\/td><td>1\.\.36 characters<\/td>/,
    );
    expect(page).toContain('<code>creditorAccountNumber.eq</code></td><td>query</td><td>no</td>');
    expect(page).toContain('<code>idempotencyId</code></td><td>header</td><td>no</td>');
  });

  it('walks request bodies into nested fields with types, bounds, patterns and required flags', () => {
    expect(page).toMatch(
      /<tr><td><code>paymentMethod<\/code><\/td><td>string<\/td><td>yes<\/td><td>1\.\.35 characters<\/td>/,
    );
    expect(page).toContain('<code>paymentProcessing.serviceLevel</code>');
    expect(page).toContain('<code>check.amount</code>');
    expect(page).toContain(escapeHtml('^-?([0]|([1-9][0-9]{0,12}))([.][0-9]{0,8})?$'));
    expect(page).toContain('<code>foreingIDIndicator</code>');
    expect(page).toContain('<code>contact.contactMethods[].channelType</code>');
    expect(page).toContain('<code>cancellationReason</code>');
    expect(page).toContain('id="schema-PartyIdentification"');
    expect(page).toContain('href="#schema-PartyIdentification"');
  });

  it('lists the responses of each operation', () => {
    expect(page).toContain('<span class="status">202</span>');
    expect(page).toContain('<span class="status">404</span>');
    expect(page).toContain('<code>application/problem+json</code>');
    expect(page).toContain('Header <code>Retry-After</code>');
  });

  it('escapes every text taken from the document', () => {
    const hostile = '<script>alert("x")</script> & <img src=x onerror=alert(1)>';
    const routes = ROUTES.map((route) =>
      route.operationId === 'getCreditTransferStatus' ? { ...route, summary: hostile } : route,
    );
    const html = renderReferencePage(buildOpenApiDocument(routes));
    expect(html).toContain(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;',
    );
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
  });

  it('loads nothing from elsewhere: no script, stylesheet link, image or absolute URL', () => {
    expect(page).not.toMatch(/<(script|link|img|iframe|object|embed)\b/i);
    expect(page).not.toMatch(/\b(src|href)="(https?:)?\/\//i);
    expect(page).toContain('<style>');
  });

  it('escapes the five HTML-significant characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

describe('the handlers', () => {
  it('GET /docs answers the page as HTML under a policy that allows inline styles only', async () => {
    const response = await getReferencePage();
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(response.headers?.['Content-Security-Policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'",
    );
    expect(REFERENCE_PAGE_CSP).toBe("default-src 'none'; style-src 'unsafe-inline'");
    for (const route of ROUTES) expect(response.body).toContain(route.operationId);
  });

  it('GET /openapi.json answers the document of the route table as JSON', async () => {
    const response = await getOpenApiDocument();
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['Content-Type']).toBe('application/json');
    expect(JSON.parse(response.body)).toEqual(buildOpenApiDocument());
  });
});
