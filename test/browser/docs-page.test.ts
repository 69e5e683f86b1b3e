import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_RENDERER } from '#shared/static-asset';
import {
  createClient,
  type LocalService,
  removeDataDir,
  startLocalService,
} from '../integration/support/local-service.ts';
import { CHROMIUM_ARGS, chromiumExecutable } from '../support/chromium.ts';

/**
 * The reference page in a real headless Chromium against the local runtime: Scalar loads from
 * this origin under the page's own Content-Security-Policy and shows every operation of the
 * document the service serves. The browser reaches the service under another host name, so the
 * server the page names can only come from the configuration (PUBLIC_URL), never from `Host`.
 * Screenshots land in test-results/ (git-ignored): docs-page*.png. The browser is the Chromium
 * of an npm package (test/support/chromium.ts): `npm ci` brings it, nothing else is installed.
 */
/** Resolved to the loopback address by the browser alone: no other program knows the name. */
const ALIAS_HOST = 'reference.invalid';
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

/** The width the layout must hold at: a laptop's browser window, the narrowest common desktop. */
const DESKTOP = { width: 1280, height: 800 };

/** Opens the page and waits for the renderer to show the document's title. */
const openReference = async (page: Page, origin: string, title: string): Promise<void> => {
  await page.goto(`${origin}/docs`);
  await page.getByText(title).first().waitFor({ timeout: 30_000 });
};

/** Scrolls until every operation's request sample is rendered (the renderer renders sections lazily). */
const renderEverySample = async (page: Page, operations: number): Promise<void> => {
  await expect
    .poll(
      async () => {
        await page.mouse.wheel(0, 3000);
        return page.locator('.request-card').count();
      },
      { timeout: 60_000, interval: 250 },
    )
    .toBeGreaterThanOrEqual(operations);
};

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** What the checks read of an element in the page (the project's types carry no DOM library). */
interface PageElement {
  innerText: string;
  textContent: string | null;
  scrollWidth: number;
  clientWidth: number;
  parentElement: PageElement | null;
  querySelector(selector: string): PageElement | null;
  getBoundingClientRect(): Box;
  getClientRects(): { length: number };
}

/** Each request sample's header: its path and the picker that names the sample's client. */
const sampleHeaders = (page: Page) =>
  page.locator('.request-card').evaluateAll((cards: PageElement[]) =>
    cards.flatMap((card) => {
      const path = card.querySelector('.scalar-card-header .operation-path');
      const title = card.querySelector('.scalar-card-header-title');
      const picker = card.querySelector('[data-testid="client-picker"]');
      const sample = card.querySelector('pre');
      if (!path || !title || !picker) return [];
      const box = (element: PageElement): Box => {
        const { left, top, right, bottom } = element.getBoundingClientRect();
        return { left, top, right, bottom };
      };
      return [
        {
          path: path.innerText,
          pathBox: box(path),
          titleCut: title.scrollWidth > title.clientWidth,
          picker: picker.innerText.trim(),
          pickerBox: box(picker),
          sample: sample?.innerText ?? '',
        },
      ];
    }),
  );

const intersect = (a: Box, b: Box): boolean =>
  a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/**
 * Every shown code block whose text is wider than its box (so part of a line is out of sight
 * until scrolled): the block, its code element and the box that would scroll it.
 */
const cutCodeBlocks = (page: Page) =>
  page.locator('pre').evaluateAll((blocks: PageElement[]) => {
    const shown = blocks.filter((block) => block.getClientRects().length > 0);
    const cut = shown.flatMap((block) =>
      [block, block.querySelector('code'), block.parentElement]
        .filter((element): element is PageElement => element !== null)
        .filter((element) => element.scrollWidth > element.clientWidth)
        .map((element) => ({
          text: (block.textContent ?? '').slice(0, 80),
          scrollWidth: element.scrollWidth,
          clientWidth: element.clientWidth,
        })),
    );
    return { checked: shown.length, cut };
  });

/** Fills the auth panel with a client id and secret and authorizes: the page fetches the token itself. */
const authorize = async (
  page: Page,
  origin: string,
  client: { clientId: string; clientSecret: string },
): Promise<string> => {
  const auth = page.locator('.scalar-reference-intro-auth');
  await expect
    .poll(async () => auth.innerText(), { timeout: 10_000 })
    .toContain('OAuth-2.0-client-credentials');
  const field = async (label: string) => {
    const id = await auth.locator('label', { hasText: label }).first().getAttribute('for');
    return auth.locator(`[id="${id}"]`);
  };
  await (await field('Client ID')).locator('[contenteditable]').fill(client.clientId);
  await (await field('Client Secret')).fill(client.clientSecret);
  const tokenAnswer = page.waitForResponse((response) => response.url() === `${origin}/oauth/token`);
  await auth.getByRole('button', { name: 'Authorize', exact: true }).click();
  const tokenResponse = await tokenAnswer;
  expect(tokenResponse.status()).toBe(200);
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
  expect(token).toMatch(/^ey/);
  await expect.poll(async () => auth.innerText(), { timeout: 10_000 }).toContain('Access Token');
  return token;
};

/** Opens an operation's try-it client from its section (by its summary). */
const openTryIt = async (page: Page, summary: string): Promise<void> => {
  await page.locator('aside, nav').getByText(summary, { exact: true }).first().click();
  const section = page.locator('section', { has: page.getByRole('heading', { name: summary, exact: true }) });
  await section.getByRole('button', { name: 'Test Request' }).first().click();
};

/** Sends the request in the open try-it client and answers the response that comes back. */
const sendTryIt = async (page: Page, method: string, path: string) => {
  const answer = page.waitForResponse(
    (response) => response.request().method() === method && new URL(response.url()).pathname === path,
  );
  await page.getByRole('button', { name: /^Send/ }).first().click();
  return answer;
};

/** A row of the try-it client's parameter tables (a header, a path parameter): its value's editor. */
const tryItValue = (page: Page, name: string) =>
  page.locator(`tr[id="${name}"]`).last().locator('[aria-label=" Value"] [contenteditable]');

describe('GET /docs in a browser', () => {
  let service: LocalService;
  let browser: Browser;

  beforeAll(async () => {
    service = await startLocalService({ env: { LOCAL_LIFECYCLE: 'off' } });
    browser = await chromium.launch({
      executablePath: await chromiumExecutable(),
      args: [`--host-resolver-rules=MAP ${ALIAS_HOST} 127.0.0.1`, ...CHROMIUM_ARGS],
    });
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

    // The initiation's samples: curl first, then this project's SDK, and nothing else.
    const initiation = page.locator('section', {
      has: page.getByRole('heading', { name: 'Credit transfer initiation', exact: true }),
    });
    await page.locator('aside, nav').getByText('Credit transfer initiation', { exact: true }).first().click();
    const sample = initiation.locator('.request-card pre').first();
    await expect.poll(async () => sample.innerText(), { timeout: 10_000 }).toMatch(/^curl /);
    const curl = await sample.innerText();
    expect(curl).toContain(`curl ${service.baseUrl}/v1/payments/credit-transfers`);
    // The key says to make a new one: a fixed key pasted twice would replay the first payment.
    expect(curl).toContain("--header 'idempotencyId: replace-with-a-new-uuid-per-payment'");
    expect(curl).not.toContain('"string"');
    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: join('test-results', 'docs-page-initiation.png'), fullPage: false });
    await initiation.getByTestId('client-picker').first().click();
    expect(await page.getByRole('option').allInnerTexts()).toEqual(['TypeScript SDK', 'Curl']);
    await page.getByRole('option', { name: 'TypeScript SDK' }).click();
    await expect.poll(async () => sample.innerText(), { timeout: 10_000 }).toContain('client.initiate(');
    const sdkSample = await sample.innerText();
    expect(sdkSample).toContain("import { CreditTransfersClient } from '@credit-transfers/client'");
    expect(sdkSample).toContain(`baseUrl: '${service.baseUrl}'`);
    expect(sdkSample).toContain('const idempotencyId = crypto.randomUUID();');
    expect(sdkSample).toContain('pay nothing');
    await initiation.getByTestId('client-picker').first().click();
    await page.getByRole('option', { name: 'Curl' }).click();
    await expect.poll(async () => sample.innerText(), { timeout: 10_000 }).toMatch(/^curl /);

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

  it('at 1280 px shows curl first for every operation, the picker clear of the path, no code line cut', async () => {
    const document = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as {
      info: { title: string };
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = operationsOf(document);
    const page = await browser.newPage({ viewport: DESKTOP });
    await openReference(page, service.baseUrl, document.info.title);
    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: join('test-results', 'docs-page-1280.png') });
    await renderEverySample(page, operations.length);

    const headers = await sampleHeaders(page);
    expect(headers.length).toBeGreaterThanOrEqual(operations.length);
    for (const header of headers) {
      expect(header.picker, header.path).toBe('Shell Curl');
      expect(header.sample, header.path).toMatch(/^curl /);
      expect(intersect(header.pathBox, header.pickerBox), `${header.path}: picker over the path`).toBe(false);
      expect(header.titleCut, `${header.path}: path cut`).toBe(false);
    }

    const { checked, cut } = await cutCodeBlocks(page);
    expect(checked).toBeGreaterThanOrEqual(operations.length);
    expect(cut).toEqual([]);

    // The longest path and its sample, as a reader sees them.
    await page
      .locator('aside, nav')
      .getByText('Credit transfer status report', { exact: true })
      .first()
      .click();
    await page.waitForTimeout(500); // the sidebar scrolls smoothly: let it settle for the picture
    await page.screenshot({ path: join('test-results', 'docs-page-1280-status.png') });
    await page.close();
  });

  it('gets a token in the auth panel from a client id and secret, and a try-it list then answers 200 with it', async () => {
    const client = {
      clientId: `docs-page-${randomBytes(4).toString('hex')}`,
      clientSecret: `secret-${randomBytes(16).toString('hex')}`,
      scope: 'transactions:read transactions:write',
      tenant: `docs-page-${randomBytes(4).toString('hex')}`,
    };
    await createClient(service, client);
    // One transfer of this client, so the list has something to show.
    const issued = await fetch(`${service.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });
    const { access_token: setupToken } = (await issued.json()) as { access_token: string };
    const initiated = await fetch(`${service.baseUrl}/v1/payments/credit-transfers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${setupToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        paymentMethod: 'CreditTransfer',
        amount: '12.34',
        currency: 'EUR',
        debtorAccountId: '001-DDA-01-123456',
      }),
    });
    expect(initiated.status).toBe(202);
    const { paymentId } = (await initiated.json()) as { paymentId: string };

    const document = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as {
      info: { title: string };
    };
    // Under the service's own origin: the page may send requests to its origin only (connect-src 'self').
    const page = await browser.newPage({ viewport: DESKTOP });
    await openReference(page, service.baseUrl, document.info.title);

    const token = await authorize(page, service.baseUrl, client);
    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: join('test-results', 'docs-page-1280-token.png') });

    await page.locator('aside, nav').getByText('List credit transfers', { exact: true }).first().click();
    const list = page.locator('section', {
      has: page.getByRole('heading', { name: 'List credit transfers', exact: true }),
    });
    await list.getByRole('button', { name: 'Test Request' }).first().click();
    const listAnswer = page.waitForResponse((response) =>
      response.url().startsWith(`${service.baseUrl}/v1/payments/credit-transfers`),
    );
    await page.getByRole('button', { name: /^Send/ }).first().click();
    const listResponse = await listAnswer;
    // No filter pre-filled: the list answers every transfer of the client.
    expect(new URL(listResponse.url()).search).toBe('');
    expect(listResponse.request().headers().authorization).toBe(`Bearer ${token}`);
    expect(listResponse.status()).toBe(200);
    const listed = (await listResponse.json()) as { paymentId: string }[];
    expect(listed.map((transfer) => transfer.paymentId)).toEqual([paymentId]);
    await expect.poll(async () => page.getByText('200 OK').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await page.screenshot({ path: join('test-results', 'docs-page-1280-try-it.png') });
    await page.close();
  });

  it('try-it reads the payment controls with their ETag, replaces them with If-Match, and approves a pending transfer', async () => {
    const tenant = `docs-page-${randomBytes(4).toString('hex')}`;
    const client = {
      clientId: `docs-page-${randomBytes(4).toString('hex')}`,
      clientSecret: `secret-${randomBytes(16).toString('hex')}`,
      scope: 'payment-controls:manage transactions:read transactions:approve',
      tenant,
    };
    const initiator = {
      clientId: `docs-page-${randomBytes(4).toString('hex')}`,
      clientSecret: `secret-${randomBytes(16).toString('hex')}`,
      scope: 'transactions:read transactions:write',
      tenant,
    };
    await Promise.all([createClient(service, client), createClient(service, initiator)]);
    const document = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as {
      info: { title: string };
    };
    const page = await browser.newPage({ viewport: DESKTOP });
    await openReference(page, service.baseUrl, document.info.title);
    const token = await authorize(page, service.baseUrl, client);

    await openTryIt(page, "The tenant's approval rules and limits");
    const read = await sendTryIt(page, 'GET', '/v1/payment-controls');
    expect(read.request().headers().authorization).toBe(`Bearer ${token}`);
    expect(read.status()).toBe(200);
    expect(read.headers().etag).toBe('"0"');
    expect(await read.json()).toEqual({ approvalRules: [], approvalExpiry: 'P7D', limits: [] });
    await expect.poll(async () => page.getByText('200 OK').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await page.keyboard.press('Escape');

    // The PUT as the page fills it in: the document's example as the JSON body, If-Match typed in.
    await openTryIt(page, "Replace the tenant's approval rules and limits");
    await tryItValue(page, 'If-Match').fill('"0"');
    const replaced = await sendTryIt(page, 'PUT', '/v1/payment-controls');
    expect(replaced.request().headers()['if-match']).toBe('"0"');
    expect(replaced.request().headers()['content-type']).toBe('application/json');
    expect(replaced.status()).toBe(200);
    expect(replaced.headers().etag).toBe('"1"');
    const stored = (await replaced.json()) as { approvalRules: { name: string }[] };
    expect(stored.approvalRules.map((rule) => rule.name)).toEqual(['large EUR payments', 'new creditors']);
    // The same If-Match again names a version that is no longer current: refused, nothing stored.
    const stale = await sendTryIt(page, 'PUT', '/v1/payment-controls');
    expect(stale.status()).toBe(412);
    expect(((await stale.json()) as { error: string }).error).toBe('precondition_failed');
    await page.screenshot({ path: join('test-results', 'docs-page-1280-try-it-controls.png') });
    await page.keyboard.press('Escape');

    // A transfer to a creditor its account never paid: held by the rule "new creditors".
    const { access_token: initiatorToken } = (await (
      await fetch(`${service.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: initiator.clientId,
          client_secret: initiator.clientSecret,
        }),
      })
    ).json()) as { access_token: string };
    const initiated = await fetch(`${service.baseUrl}/v1/payments/credit-transfers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${initiatorToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        paymentMethod: 'CreditTransfer',
        amount: '12.34',
        currency: 'EUR',
        debtorAccountId: 'DE89370400440532013000',
        creditorAccountId: 'FR1420041010050500013M02606',
      }),
    });
    const pending = (await initiated.json()) as { paymentId: string; status: string };
    expect(pending.status).toBe('Pending');

    await openTryIt(page, 'Approve or reject a credit transfer that waits for approval');
    await tryItValue(page, 'paymentId').fill(pending.paymentId);
    const key = randomBytes(8).toString('hex');
    await tryItValue(page, 'idempotencyId').fill(key);
    const approvalPath = `/v1/payments/credit-transfers/${pending.paymentId}/approvals`;
    const approved = await sendTryIt(page, 'POST', approvalPath);
    expect(approved.request().headers().idempotencyid).toBe(key);
    expect(JSON.parse(approved.request().postData() ?? '')).toMatchObject({ decision: 'approve' });
    expect(approved.status()).toBe(200);
    expect(((await approved.json()) as { status: string }).status).toBe('Received');
    await page.close();
  });

  it('serves the renderer as a static script from the same origin, byte for byte (a streamed answer)', async () => {
    const response = await fetch(`${service.baseUrl}/docs/scalar.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    const renderer = readFileSync(join(process.cwd(), REFERENCE_RENDERER.source));
    expect(Buffer.from(await response.arrayBuffer()).equals(renderer)).toBe(true);
  });
});
