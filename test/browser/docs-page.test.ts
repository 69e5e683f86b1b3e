import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, removeDataDir, startLocalService } from '../integration/support/local-service.ts';

/**
 * The reference page in a real headless Chromium against the local runtime: Scalar loads from
 * this origin under the page's own Content-Security-Policy and shows every operation of the
 * document the service serves. The browser reaches the service under another host name, so the
 * server the page names can only come from the configuration (PUBLIC_URL), never from `Host`.
 * Screenshots land in test-results/docs-page.png and test-results/docs-page-initiation.png.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Resolved to the loopback address by the browser alone: no other program knows the name. */
const ALIAS_HOST = 'reference.invalid';
const CHROMIUM_ARGS = [
  `--host-resolver-rules=MAP ${ALIAS_HOST} 127.0.0.1`,
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Operation {
  method: string;
  path: string;
  operationId: string;
  summary: string;
}

const operationsOf = (document: { paths: Record<string, Record<string, unknown>> }): Operation[] =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => {
        const { operationId, summary } = operation as { operationId: string; summary?: string };
        return { method, path, operationId, summary: summary ?? operationId };
      }),
  );

describe('GET /docs in a browser', () => {
  let service: LocalService;
  let browser: Browser;

  beforeAll(async () => {
    service = await startLocalService({ env: { LOCAL_LIFECYCLE: 'off' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    if (service) await removeDataDir(service.dataDir);
  });

  it('renders every operation of the served OpenAPI document, loading nothing from elsewhere', async () => {
    const document = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as {
      info: { title: string };
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = operationsOf(document);
    expect(operations.length).toBeGreaterThan(0);

    const pageOrigin = service.baseUrl.replace('127.0.0.1', ALIAS_HOST);
    expect(pageOrigin).not.toBe(service.baseUrl);
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const elsewhere: string[] = [];
    const refused: string[] = [];
    const failed: string[] = [];
    const notLoaded: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(pageOrigin) && !/^(data|blob):/.test(request.url())) {
        elsewhere.push(request.url());
      }
    });
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
      // A missing favicon.ico, among others, shows only here.
      if (/Failed to load resource/i.test(message.text())) notLoaded.push(message.text());
    });
    page.on('pageerror', (error) => failed.push(error.message));

    const response = await page.goto(`${pageOrigin}/docs`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByText(document.info.title).first().waitFor({ timeout: 30_000 });

    // Each operation's summary, as Scalar titles its section, and its path.
    const text = await page.locator('body').innerText();
    for (const operation of operations) {
      await expect
        .poll(async () => page.getByText(operation.summary, { exact: true }).count(), {
          message: `${operation.operationId}: "${operation.summary}"`,
          timeout: 10_000,
        })
        .toBeGreaterThan(0);
      const shownPath = operation.path.replace(/\{[^}]+\}/g, '');
      expect(
        text.includes(shownPath) || (await page.content()).includes(operation.path),
        operation.path,
      ).toBe(true);
    }

    // The server line is the configured public URL, absolute, whatever host the page was asked under.
    const server = page.locator('.scalar-reference-intro-server');
    await expect.poll(async () => server.innerText(), { timeout: 10_000 }).toContain(service.baseUrl);
    // "Server", a screen reader's "Server:", then the URL on a line of its own.
    expect((await server.innerText()).split('\n')).toContain(service.baseUrl);
    expect(text).not.toContain(ALIAS_HOST);
    expect(service.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // The page's own routes are not API operations: neither in the document nor on the page.
    for (const internal of ['/docs', '/docs/scalar.js'])
      expect(Object.keys(document.paths)).not.toContain(internal);
    for (const summary of ['API reference page', 'The script that renders the API reference page']) {
      expect(await page.getByText(summary, { exact: true }).count(), summary).toBe(0);
    }
    expect(text).not.toContain('/docs/scalar.js');

    // The initiation's samples: this project's SDK first, then curl, and nothing else.
    const initiation = page.locator('section', {
      has: page.getByRole('heading', { name: 'Credit transfer initiation', exact: true }),
    });
    await page.locator('aside, nav').getByText('Credit transfer initiation', { exact: true }).first().click();
    const sample = initiation.locator('.request-card pre').first();
    await expect.poll(async () => sample.innerText(), { timeout: 10_000 }).toContain('client.initiate(');
    const sdkSample = await sample.innerText();
    expect(sdkSample).toContain("import { CreditTransfersClient } from '@credit-transfers/client'");
    expect(sdkSample).toContain(`baseUrl: '${service.baseUrl}'`);
    expect(sdkSample).toContain('idempotencyId:');
    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: join('test-results', 'docs-page-initiation.png'), fullPage: false });
    await initiation.getByTestId('client-picker').first().click();
    expect(await page.getByRole('option').allInnerTexts()).toEqual(['TypeScript SDK', 'Curl']);
    await page.getByRole('option', { name: 'Curl' }).click();
    await expect.poll(async () => sample.innerText(), { timeout: 10_000 }).toContain('curl ');
    const curl = await sample.innerText();
    expect(curl).toContain(`curl ${service.baseUrl}/v1/payments/credit-transfers`);
    expect(curl).toMatch(/--header 'idempotencyId: [^']+'/);
    expect(curl).not.toContain('"string"');

    // The token sample, as copied, sends the credentials once (in the body) to the configured URL.
    const token = page.locator('section', {
      has: page.getByRole('heading', {
        name: 'Issue an access token (OAuth 2.0 client credentials)',
        exact: true,
      }),
    });
    const tokenCurl = await token.locator('.request-card pre').first().innerText();
    expect(tokenCurl).toContain(`curl ${service.baseUrl}/oauth/token`);
    expect(tokenCurl).not.toContain('Authorization');
    expect(tokenCurl).toContain('"client_secret": "local-client-secret"');

    await page.goto(`${pageOrigin}/docs`);
    await page.getByText(document.info.title).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join('test-results', 'docs-page.png'), fullPage: false });
    expect(elsewhere).toEqual([]);
    expect(refused).toEqual([]);
    expect(failed).toEqual([]);
    expect(notLoaded).toEqual([]);
    await page.close();
  });

  it('serves the renderer as a static script from the same origin', async () => {
    const response = await fetch(`${service.baseUrl}/docs/scalar.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await response.text()).length).toBeGreaterThan(100_000);
  });
});
