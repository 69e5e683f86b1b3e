import { Agent, createServer, type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInstance, getHttpOperationsFromSpec, type IHttpConfig } from '@stoplight/prism-http';
import { expect } from 'vitest';
import { matchPath } from '#routes';
import committed from '../../../openapi/openapi.json' with { type: 'json' };

/**
 * A proxy between the integration tests and the local service that has Prism check every
 * response against the OpenAPI document the service serves at /openapi.json, with the
 * operations it leaves out of it (`x-internal`: the reference page and its script) taken from
 * the committed document, so their answers are held to the contract too.
 *
 * It passes bytes through unchanged both ways (header names, letter case, repeats, bodies that
 * are not JSON or not UTF-8), so the service meets exactly what each test sends; Prism's own
 * proxy re-serialises JSON bodies, which would hide the cases the hostile-input tests send on
 * purpose. Each finished exchange goes through Prism's HTTP pipeline in proxy mode, with a
 * forwarder that hands it the response already received: Prism routes the request, validates
 * it (bad requests are expected: tests send them on purpose, so those findings are dropped)
 * and validates the response, whose error findings are contract violations.
 */

export interface ContractViolation {
  test: string;
  exchange: string;
  findings: string[];
}

export interface ContractProxy {
  url: string;
  /** Points the proxy at the service and loads its /openapi.json. */
  connect(serviceUrl: string): Promise<void>;
  /** Violations so far (after every exchange in flight is checked). */
  violations(): Promise<ContractViolation[]>;
  close(): Promise<void>;
}

interface Exchange {
  method: string;
  url: string;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  responseBody: Buffer;
  test: string;
}

const silentLogger = {
  child: () => silentLogger,
  info: () => {},
  warn: () => {},
  error: () => {},
  debug: () => {},
  trace: () => {},
  fatal: () => {},
  success: () => {},
};

/** A body as Prism reads one: JSON when it says so and parses, otherwise text. */
const bodyOf = (bytes: Buffer, headers: IncomingHttpHeaders): unknown => {
  if (bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  if (/json/i.test(headers['content-type'] ?? '')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
};

const headersOf = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.join(', ') : (value ?? ''),
    ]),
  );

const decodable = (url: string): boolean => {
  try {
    decodeURIComponent(url.split('?')[0] ?? '');
    return true;
  } catch {
    return false;
  }
};

/**
 * Prism drops header values that are empty strings before it validates, then reports the header
 * missing. A header sent with an empty value (`Pagination-Cursor` on the last page) is present.
 */
const isPresentEmptyHeader = (message: string, exchange: Exchange): boolean => {
  const name = /^Response header must have required property '([^']+)'$/.exec(message)?.[1];
  return name !== undefined && exchange.responseHeaders[name] === '';
};

type PathItems = Record<string, Record<string, unknown>>;

/**
 * The served document with the committed document's `x-internal` operations added back. A served
 * document that still holds one of them is a fault of the service, not something to merge.
 */
export const contractOf = (served: { paths: PathItems; components?: object }): object => {
  const paths: PathItems = { ...served.paths };
  for (const [path, item] of Object.entries(committed.paths as unknown as PathItems)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!(operation as { 'x-internal'?: boolean })['x-internal']) continue;
      if (paths[path]?.[method] !== undefined) {
        throw new Error(`The served document shows the internal operation ${method.toUpperCase()} ${path}`);
      }
      paths[path] = { ...paths[path], [method]: operation };
    }
  }
  // The operations refer to the committed document's components (the Problem body).
  return { ...served, paths, components: { ...committed.components, ...served.components } };
};

const currentTest = (): string => {
  try {
    return expect.getState().currentTestName ?? '(outside a test)';
  } catch {
    return '(outside a test)';
  }
};

export const startContractProxy = async (port = 0): Promise<ContractProxy> => {
  let upstream: URL | undefined;
  let check: ((exchange: Exchange) => Promise<string[]>) | undefined;
  const found: ContractViolation[] = [];
  let unchecked: Exchange[] = [];
  const agent = new Agent({ keepAlive: true });

  const record = (exchange: Exchange) => {
    // A path that is not valid percent-encoding names no operation of the document (the test
    // sends it on purpose); Prism's router cannot read it, so there is nothing to check it against.
    if (decodable(exchange.url)) unchecked.push(exchange);
  };

  const checkRecorded = async () => {
    const exchanges = unchecked;
    unchecked = [];
    if (!check) return;
    for (const exchange of exchanges) {
      const where = `${exchange.method} ${exchange.url.split('?')[0]} -> ${exchange.status}`;
      try {
        const findings = await check(exchange);
        if (findings.length > 0) found.push({ test: exchange.test, exchange: where, findings });
      } catch (error) {
        found.push({ test: exchange.test, exchange: where, findings: [String(error)] });
      }
    }
  };

  const server = createServer(
    // The service, not the proxy, decides what is too large or too slow.
    { maxHeaderSize: 1024 * 1024, requestTimeout: 0, headersTimeout: 0, keepAliveTimeout: 65_000 },
    (incoming, outgoing) => {
      if (!upstream) {
        outgoing.writeHead(503).end();
        return;
      }
      const test = currentTest();
      const forwarded = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.rawHeaders,
          agent,
          setHost: false,
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
          const responseChunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => {
            responseChunks.push(chunk);
            outgoing.write(chunk);
          });
          answer.on('end', () => {
            outgoing.end();
            record({
              method: incoming.method ?? 'GET',
              url: incoming.url ?? '/',
              status: answer.statusCode ?? 0,
              responseHeaders: answer.headers,
              responseBody: Buffer.concat(responseChunks),
              test,
            });
          });
          answer.on('error', () => outgoing.destroy());
        },
      );
      // The service closed the connection without an answer (a refused or too-slow request): so does the proxy.
      forwarded.on('error', () => outgoing.destroy());
      // Streamed as it arrives: a test that sends its body slowly meets the service's own timeout.
      incoming.pipe(forwarded);
      incoming.on('error', () => forwarded.destroy());
      outgoing.on('close', () => {
        if (!outgoing.writableFinished) forwarded.destroy();
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    connect: async (serviceUrl) => {
      upstream = new URL(serviceUrl);
      const served = (await (await fetch(`${serviceUrl}/openapi.json`)).json()) as { paths: PathItems };
      const operations = await getHttpOperationsFromSpec(contractOf(served));
      const config: IHttpConfig = {
        isProxy: true,
        upstream,
        errors: false,
        // Requests are not judged: tests send bad ones on purpose.
        checkSecurity: false,
        validateRequest: false,
        validateResponse: true,
        mock: { dynamic: false },
      } as IHttpConfig;
      // The exchange already happened: Prism's forwarder is handed the response it got.
      const responses = new WeakMap<object, unknown>();
      const prism = createInstance(config, {
        logger: silentLogger as never,
        forward: (({ data }: { data: object }) =>
          () =>
          async () => ({ _tag: 'Right', right: responses.get(data) })) as never,
      });
      check = async (exchange) => {
        // Only what routes the request: its headers and body are not judged, and a hostile one
        // (a Content-Type Prism cannot parse) must not keep the response from being checked.
        const input = {
          method: exchange.method.toLowerCase() as never,
          url: { path: new URL(exchange.url, 'http://proxy').pathname },
          headers: {},
        };
        responses.set(input, {
          statusCode: exchange.status,
          headers: headersOf(exchange.responseHeaders),
          body: bodyOf(exchange.responseBody, exchange.responseHeaders),
        });
        const result = await prism.request(input, operations)();
        if (result._tag === 'Left') return [`Prism could not check the exchange: ${result.left.message}`];
        const unrouted = result.right.validations.input.some(
          (finding) => finding.message === 'Selected route not found',
        );
        if (unrouted) {
          // Not in the document (/health, a path or method the service refuses): nothing to check,
          // unless the document does describe it and Prism failed to find it.
          const documented = operations.some(
            (candidate) =>
              candidate.method === input.method && matchPath(candidate.path, input.url.path) !== undefined,
          );
          return documented ? ['Prism found no operation for an exchange the document describes'] : [];
        }
        return result.right.validations.output
          .filter((finding) => finding.severity === 0 && !isPresentEmptyHeader(finding.message, exchange))
          .map((finding) => `${finding.path?.join('.') ?? ''} ${finding.message}`.trim());
      };
    },
    violations: async () => {
      await checkRecorded();
      return [...found];
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
};

/** Fails with every contract violation found, one line each. */
export const assertNoContractViolations = (violations: readonly ContractViolation[]): void => {
  if (violations.length === 0) return;
  const lines = violations.map(
    (violation) => `${violation.exchange} (in "${violation.test}"): ${violation.findings.join('; ')}`,
  );
  throw new Error(
    `${violations.length} response(s) broke the OpenAPI document (/openapi.json):\n${lines.join('\n')}`,
  );
};
