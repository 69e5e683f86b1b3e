import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContractProxy, startContractProxy } from './support/contract-proxy.ts';

/** The proxy in front of the integration suites finds what breaks a document, and only that. */
const document = {
  openapi: '3.1.0',
  info: { title: 'probe', version: '1' },
  paths: {
    '/things/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'A thing.',
            headers: {
              ETag: { required: true, schema: { type: 'string' } },
              'Pagination-Cursor': { required: true, schema: { type: 'string' } },
            },
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['name'],
                  properties: { name: { type: 'string', maxLength: 5 } },
                  additionalProperties: false,
                },
              },
            },
          },
        },
      },
    },
  },
};

/** Answers each path as the test says; /openapi.json is the document above. */
let upstream: Server;
let upstreamUrl: string;
let proxy: ContractProxy;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    if (request.url === '/openapi.json') {
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(document));
      return;
    }
    const body: Record<string, string> = {
      '/things/good': '{"name":"ok"}',
      '/things/long': '{"name":"far too long"}',
      '/things/extra': '{"name":"ok","secret":"x"}',
      '/things/bare': '{"name":"ok"}',
      '/docs': '<!doctype html><title>page</title>',
      '/docs/scalar.js': '{"not":"a script"}',
    };
    if (request.url === '/docs') {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body['/docs']);
      return;
    }
    const headers: Record<string, string> =
      request.url === '/things/bare'
        ? { 'Content-Type': 'application/json' }
        : { 'Content-Type': 'application/json', ETag: '"1"', 'Pagination-Cursor': '' };
    response.writeHead(200, headers).end(body[request.url ?? ''] ?? '{}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = await startContractProxy();
  await proxy.connect(upstreamUrl);
});

afterAll(async () => {
  await proxy?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('the contract proxy', () => {
  it('passes the answer through unchanged and finds nothing in a conforming one', async () => {
    const reply = await fetch(`${proxy.url}/things/good`, { headers: { 'Content-Type': 'x' } });
    expect(await reply.text()).toBe('{"name":"ok"}');
    expect(reply.headers.get('pagination-cursor')).toBe('');
    expect(await proxy.violations()).toEqual([]);
  });

  it('finds a body beyond its schema, an unknown field and a missing required header', async () => {
    for (const path of ['/things/long', '/things/extra', '/things/bare']) await fetch(`${proxy.url}${path}`);
    const violations = await proxy.violations();
    expect(violations.map((violation) => violation.exchange)).toEqual([
      'GET /things/long -> 200',
      'GET /things/extra -> 200',
      'GET /things/bare -> 200',
    ]);
    expect(violations[0]?.findings.join(' ')).toMatch(/5 characters/);
    expect(violations[1]?.findings.join(' ')).toMatch(/additional properties/);
    expect(violations[2]?.findings.join(' ')).toMatch(/etag/);
    expect(violations[0]?.test).toMatch(/finds a body beyond its schema/);
  });

  it("holds the reference page's own routes, which the served document leaves out, to the committed contract", async () => {
    await fetch(`${proxy.url}/docs`);
    await fetch(`${proxy.url}/docs/scalar.js`);
    const violations = (await proxy.violations()).filter((violation) => violation.exchange.includes('/docs'));
    expect(violations.map((violation) => violation.exchange)).toEqual(['GET /docs/scalar.js -> 200']);
    expect(violations[0]?.findings.join(' ')).toMatch(/media type/i);
  });
});
