import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, removeDataDir, startLocalService } from '../integration/support/local-service.ts';

/**
 * The reference page in a real headless Chromium against the local runtime: Scalar loads from
 * this origin under the page's own Content-Security-Policy and shows every operation of the
 * document the service serves. A screenshot lands in test-results/docs-page.png.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
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

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const elsewhere: string[] = [];
    const refused: string[] = [];
    const failed: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(service.baseUrl) && !/^(data|blob):/.test(request.url())) {
        elsewhere.push(request.url());
      }
    });
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });
    page.on('pageerror', (error) => failed.push(error.message));

    const response = await page.goto(`${service.baseUrl}/docs`);
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

    // Request samples (and try-it) address this same origin, through the document's relative server.
    const sampleUrls = async () =>
      [...(await page.locator('body').innerText()).matchAll(/curl (\S+)/g)].map((match) =>
        URL.canParse(match[1] ?? '') ? new URL(match[1] ?? '').href : '',
      );
    await expect
      .poll(sampleUrls, { message: 'a request sample addressing this origin', timeout: 10_000 })
      .toContain(`${service.baseUrl}/oauth/token`);

    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: join('test-results', 'docs-page.png'), fullPage: false });
    expect(elsewhere).toEqual([]);
    expect(refused).toEqual([]);
    expect(failed).toEqual([]);
    await page.close();
  });

  it('serves the renderer as a static script from the same origin', async () => {
    const response = await fetch(`${service.baseUrl}/docs/scalar.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await response.text()).length).toBeGreaterThan(100_000);
  });
});
