import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import type { TenantRateLimit } from '#domain/access/tenant-rate-limit';
import { InvalidRequestError } from '#domain/commons/errors';
import { matchPath, type Route } from '#routes';
import { wholeNumber } from '#shared/config';
import {
  type GatewayResponseType,
  gatewayResponse,
  gatewayResponseBody,
  gatewayResponseHeaders,
  methodNotAllowed,
} from '#shared/gateway-responses';
import { logger } from '#shared/logger';
import { MAX_BODY_BYTES, PayloadTooLargeError, toProblemResponse } from '#shared/middleware';
import { type ErrorCode, PROBLEM_CONTENT_TYPE, problemBody, problemResponse } from '#shared/problem';
import { functionNameOf, inOwnContext } from './invocations.ts';
import { checkServiceCall, type ServiceCall } from './service-calls.ts';

/**
 * One HTTP server that behaves as the REST API does on AWS: it matches the same route table,
 * runs the same REQUEST authorizer (with a result cache, as API Gateway keeps one), hands the
 * same handlers v1 proxy events and answers with the same Gateway Responses.
 */
export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type TokenAuthorizer = (
  event: APIGatewayRequestAuthorizerEvent,
  context: Context,
) => Promise<APIGatewayAuthorizerResult>;
export type PolicyEvaluator = (
  policy: APIGatewayAuthorizerResult['policyDocument'],
  methodArn: string,
) => boolean;

/** The authorizer's handler, as the stack names its function. */
export const AUTHORIZER_ENTRY = 'lambdas/auth/authorizer.ts';

export interface BoundRoute {
  route: Route;
  handler: ProxyHandler;
}

export interface ApiGatewayOptions {
  routes: readonly BoundRoute[];
  authorizer: TokenAuthorizer;
  isAllowed: PolicyEvaluator;
  authorizerCacheSeconds?: number;
  stage?: string;
  /** How long the body may take to arrive once the headers have; clientLimits() by default. */
  bodyTimeoutMs?: number;
  /** Requests per second per tenant (authorized routes), as the stage's usage plans; none by default. */
  tenantRateLimit?: TenantRateLimit;
  /**
   * Tenants with a limit of their own (`npm run clients -- set-limit`), in place of
   * `tenantRateLimit` for them; applied only when `tenantRateLimit` is set, as TENANT_RATE_LIMIT
   * switches local limits on.
   */
  tenantRateLimits?: () => ReadonlyMap<string, TenantRateLimit>;
}

/**
 * One token bucket per tenant, as API Gateway's usage plans keep one per API key (one key per
 * tenant): `ratePerSecond` tokens a second, at most `burst` kept; each tenant's numbers are its
 * own limit if it has one, the default otherwise. Each tenant has its own bucket, so one
 * tenant's flood is refused without slowing another.
 */
export class TenantRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: TenantRateLimit,
    private readonly now: () => number = () => Date.now(),
    private readonly ownLimits: () => ReadonlyMap<string, TenantRateLimit> = () => new Map(),
  ) {}

  /** 0 when the tenant's request may go (a token is taken), else the whole seconds until one would. */
  take(tenant: string): number {
    const now = this.now();
    const limit = this.ownLimits().get(tenant) ?? this.limit;
    const bucket = this.buckets.get(tenant) ?? { tokens: limit.burst, at: now };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * limit.ratePerSecond);
    bucket.at = now;
    this.buckets.set(tenant, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / limit.ratePerSecond));
  }
}

/**
 * How long a client may take to send a request. Everything is derived from one total
 * (`CLIENT_TIMEOUT_MS`, 30 s by default; tests shorten it): Node checks its header and request
 * timeouts every `checkIntervalMs`, so each is set that much below the total, and a slow client
 * is cut off within the total at the latest.
 */
export interface ClientLimits {
  totalMs: number;
  checkIntervalMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  bodyTimeoutMs: number;
}

const DEFAULT_CLIENT_TIMEOUT_MS = 30_000;

export const clientLimits = (environment: NodeJS.ProcessEnv = process.env): ClientLimits => {
  const configured = environment.CLIENT_TIMEOUT_MS;
  const totalMs =
    configured === undefined || configured === ''
      ? DEFAULT_CLIENT_TIMEOUT_MS
      : wholeNumber('Environment variable CLIENT_TIMEOUT_MS (milliseconds)', configured, { min: 100 });
  const checkIntervalMs = Math.min(1000, Math.floor(totalMs / 10));
  const withinTotal = totalMs - checkIntervalMs;
  return {
    totalMs,
    checkIntervalMs,
    headersTimeoutMs: withinTotal,
    requestTimeoutMs: withinTotal,
    bodyTimeoutMs: withinTotal,
  };
};

/** What Node's parser or its timeouts refused, as the answer the client reads. */
const clientErrorAnswer = (
  code: string | undefined,
): { status: number; error: ErrorCode; description: string } => {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        error: 'request_header_fields_too_large',
        description: 'The request headers are too large',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, error: 'payload_too_large', description: 'The request body is too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: 'request_timeout', description: 'The request took too long to arrive' };
    default:
      return { status: 400, error: 'invalid_request', description: 'The request is not valid HTTP/1.1' };
  }
};

/** Answers on the raw socket, as Node would, but with the service's error body; then closes it. */
const answerClientError = (error: Error & { code?: string }, socket: Duplex): void => {
  // Node's own test: nothing may be written once a response to this request has begun.
  const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, error: code, description } = clientErrorAnswer(error.code);
  const problem = problemBody(status, code, description);
  const body = Buffer.from(JSON.stringify(problem));
  socket.end(
    `HTTP/1.1 ${status} ${problem.title}\r\n` +
      `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nCache-Control: no-store\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString()}`,
  );
};

/**
 * The HTTP server in front of the gateway: a slow client is cut off with a 408, and everything
 * Node's parser refuses by itself (431, 400, 413) is answered with the service's error body.
 */
export const createHttpServer = (
  listener: RequestListener,
  limits: ClientLimits = clientLimits(),
): Server => {
  const server = createServer(
    {
      connectionsCheckingInterval: limits.checkIntervalMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
    },
    listener,
  );
  server.on('clientError', answerClientError);
  // A client that asks before sending its body (Expect: 100-continue) is answered like any other:
  // the gateway sends 100 Continue only once the route and the authorization let the body in.
  server.on('checkContinue', listener);
  return server;
};

const REGION = 'local';
const ACCOUNT = '000000000000';
const API_ID = 'local';

const lambdaContext = (functionName: string): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionName}`,
  memoryLimitInMB: '1024',
  awsRequestId: randomUUID(),
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => 29_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

const send = (response: ServerResponse, result: APIGatewayProxyResult): void => {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {}))
    headers[name] = values.map(String);
  response.writeHead(result.statusCode, headers);
  response.end(
    result.body === undefined
      ? undefined
      : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'),
  );
};

const sendGatewayResponse = (
  response: ServerResponse,
  type: GatewayResponseType,
  headers: Record<string, string> = {},
): void => {
  const definition = gatewayResponse(type);
  send(response, {
    statusCode: definition.statusCode,
    headers: { ...gatewayResponseHeaders(definition), ...headers },
    body: gatewayResponseBody(definition),
  });
};

/**
 * The most bytes a route's body may have: the service's own limit, which every handler that reads
 * a body applies (API Gateway's 10 MB would let a body that large be held in memory first).
 */
const MAX_ROUTE_BODY_BYTES = MAX_BODY_BYTES;
/** Bodies read at once; further requests wait their turn, their bytes left in the socket. */
const MAX_BODIES_READ_AT_ONCE = 32;

/** At most `size` calls of `run` at a time; the others wait in order. */
class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.size) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** The client went away before its request was read or answered. */
class ClientAbortedError extends Error {
  override name = 'ClientAbortedError';
}

/**
 * Reads the body, up to `limit` bytes: past it (or when the declared Content-Length already is)
 * it answers 'too-large' at once, keeping nothing; the rest is never read (Node closes the
 * connection once the answer is out). A body still arriving after `timeoutMs` is given up on.
 */
const readBody = (
  request: IncomingMessage,
  response: ServerResponse,
  limit: number,
  timeoutMs: number,
): Promise<Buffer | 'too-large' | 'timeout'> => {
  if (Number(request.headers['content-length'] ?? 0) > limit) return Promise.resolve('too-large');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      clearTimeout(deadline);
      request.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const refuse = (outcome: 'too-large' | 'timeout') => {
      stop();
      chunks.length = 0;
      resolve(outcome);
    };
    const deadline = setTimeout(() => refuse('timeout'), timeoutMs);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) refuse('too-large');
      else chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error & { code?: string }) => {
      stop();
      reject(error.code === 'ECONNRESET' ? new ClientAbortedError(error.message) : error);
    };
    const onClose = () => onError(new ClientAbortedError('the connection closed before the body ended'));
    request.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    // A client that waits for 100 Continue sends the body only now that it is wanted.
    if (/100-continue/i.test(request.headers.expect ?? '')) response.writeContinue();
  });
};

/** The 413 the route's handler gives: the token endpoint answers its refusals as application/json (RFC 6749). */
const tooLargeAnswer = (route: Route): APIGatewayProxyResult => {
  const answer = toProblemResponse(new PayloadTooLargeError(route.maxBodyBytes));
  if (route.path !== '/oauth/token') return answer;
  return {
    ...answer,
    headers: { ...answer.headers, 'Content-Type': 'application/json', Pragma: 'no-cache' },
  };
};

/** The 408 for a body too slow to arrive; the connection closes, as the rest of it is not wanted. */
const sendRequestTimeout = (response: ServerResponse): void => {
  send(
    response,
    problemResponse(408, 'request_timeout', 'The request took too long to arrive', {
      headers: { Connection: 'close' },
    }),
  );
  response.once('finish', () => response.socket?.destroy());
};

/** Node keeps the first of two Authorization headers, API Gateway another: a repeat is refused before either. */
const repeatedAuthorization = (request: IncomingMessage): boolean =>
  headerEntries(request).filter(([name]) => name.toLowerCase() === 'authorization').length > 1;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** As API Gateway hands a body over: text when it is UTF-8, otherwise base64 of the bytes. */
const proxyBody = (body: Buffer): Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'> => {
  if (body.length === 0) return { body: null, isBase64Encoded: false };
  try {
    return { body: utf8.decode(body), isBase64Encoded: false };
  } catch {
    return { body: body.toString('base64'), isBase64Encoded: true };
  }
};

/** Single- and multi-value maps as API Gateway builds them; Maps, so a name like `toString` is just a name. */
const toRecord = (
  entries: Iterable<[string, string]>,
): { single: Record<string, string> | null; multi: Record<string, string[]> | null } => {
  const multi = new Map<string, string[]>();
  for (const [name, value] of entries) multi.set(name, [...(multi.get(name) ?? []), value]);
  if (multi.size === 0) return { single: null, multi: null };
  return {
    single: Object.fromEntries([...multi].map(([name, values]) => [name, values.at(-1) ?? ''])),
    multi: Object.fromEntries(multi),
  };
};

const headerEntries = (request: IncomingMessage): [string, string][] => {
  const entries: [string, string][] = [];
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    entries.push([request.rawHeaders[index] ?? '', request.rawHeaders[index + 1] ?? '']);
  }
  return entries;
};

const methodArn = (stage: string, route: Route, path: string): string =>
  `arn:aws:execute-api:${REGION}:${ACCOUNT}:${API_ID}/${stage}/${route.method}${path}`;

export const createApiGateway = (options: ApiGatewayOptions): RequestListener => {
  const stage = options.stage ?? 'live';
  const bodyTimeoutMs = options.bodyTimeoutMs ?? clientLimits().bodyTimeoutMs;
  const cacheMilliseconds = (options.authorizerCacheSeconds ?? 30) * 1000;
  const rateLimiter =
    options.tenantRateLimit &&
    new TenantRateLimiter(options.tenantRateLimit, undefined, options.tenantRateLimits);
  const authorizerCache = new Map<string, { result: APIGatewayAuthorizerResult; expires: number }>();

  /**
   * API Gateway's lambda:InvokeFunction of the function, as the function's resource policy allows
   * it (checked locally as on AWS): refused, the gateway answers with a configuration error.
   */
  const mayInvoke = async (call: ServiceCall): Promise<boolean> => {
    try {
      await checkServiceCall(call);
      return true;
    } catch (error) {
      console.error(
        'API Gateway could not invoke the function: invalid permissions on Lambda function',
        error,
      );
      return false;
    }
  };

  const authorize = async (
    token: string,
    arn: string,
    request: { method: string; path: string; headers: Record<string, string> },
  ): Promise<APIGatewayAuthorizerResult | 'failed' | 'not-invoked' | undefined> => {
    // A DPoP-bound token is checked on every call (its proof is new each time, and a proof seen
    // before must be refused): only Bearer answers are cached, by the Authorization header.
    const cacheable = !/^\s*dpop\s/i.test(token);
    const cached = cacheable ? authorizerCache.get(token) : undefined;
    if (cached && cached.expires > Date.now()) return cached.result;
    if (!(await mayInvoke({ kind: 'authorizer' }))) return 'not-invoked';
    try {
      const context = lambdaContext('authorizer');
      const event = {
        type: 'REQUEST',
        methodArn: arn,
        httpMethod: request.method,
        path: request.path,
        resource: request.path,
        headers: request.headers,
      } as unknown as APIGatewayRequestAuthorizerEvent;
      const result = await inOwnContext(
        'Authorizer',
        context.awsRequestId,
        () => options.authorizer(event, context),
        AUTHORIZER_ENTRY,
      );
      if (!cacheable) return result;
      // Expired entries go once the cache grows, so a long-running local service stays small.
      if (authorizerCache.size >= 10_000) {
        for (const [key, entry] of authorizerCache)
          if (entry.expires <= Date.now()) authorizerCache.delete(key);
      }
      authorizerCache.set(token, { result, expires: Date.now() + cacheMilliseconds });
      return result;
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') return undefined;
      console.error('The authorizer failed', error);
      return 'failed';
    }
  };

  const bodySlots = new Slots(MAX_BODIES_READ_AT_ONCE);

  const dispatch = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    let path = url.pathname;
    try {
      path = decodeURI(url.pathname);
    } catch {
      // Left encoded: the path parameter holding the broken escape is refused by name below.
    }
    // The route and the authorization first, from the headers alone: no body is read for a
    // request that is refused anyway.
    const candidates = options.routes.flatMap(({ route, handler }) => {
      const parameters = matchPath(route.path, url.pathname);
      return parameters ? [{ route, handler, parameters }] : [];
    });
    const matched = candidates.find(({ route }) => route.method === request.method);
    if (!matched) {
      if (candidates.length === 0) return sendGatewayResponse(response, 'MISSING_AUTHENTICATION_TOKEN');
      return send(response, methodNotAllowed([...new Set(candidates.map(({ route }) => route.method))]));
    }
    const { route, handler, parameters } = matched;

    let authorizer: APIGatewayProxyEvent['requestContext']['authorizer'] = null;
    if (route.scope) {
      if (repeatedAuthorization(request)) {
        return send(
          response,
          problemResponse(400, 'invalid_request', 'A request header is repeated', {
            invalidParams: [{ name: 'Authorization', reason: 'must be sent once' }],
          }),
        );
      }
      const token = request.headers.authorization;
      if (!token) return sendGatewayResponse(response, 'UNAUTHORIZED');
      const arn = methodArn(stage, route, url.pathname);
      const result = await authorize(token, arn, {
        method: route.method,
        path: url.pathname,
        headers: Object.fromEntries(headerEntries(request)),
      });
      if (!result) return sendGatewayResponse(response, 'UNAUTHORIZED');
      if (result === 'failed') return sendGatewayResponse(response, 'AUTHORIZER_FAILURE');
      if (result === 'not-invoked') return sendGatewayResponse(response, 'AUTHORIZER_CONFIGURATION_ERROR');
      if (!options.isAllowed(result.policyDocument, arn))
        return sendGatewayResponse(response, 'ACCESS_DENIED');
      // As on AWS, where the authorized methods require the API key the authorizer names: without
      // one API Gateway answers INVALID_API_KEY, whatever the limits.
      if (!result.usageIdentifierKey) return sendGatewayResponse(response, 'INVALID_API_KEY');
      authorizer = { ...result.context, principalId: result.principalId };
      const tenant = result.context?.tenant;
      const wait = rateLimiter && typeof tenant === 'string' ? rateLimiter.take(tenant) : 0;
      if (wait > 0) return sendGatewayResponse(response, 'THROTTLED', { 'Retry-After': String(wait) });
    }
    const body = await bodySlots.run(() =>
      readBody(request, response, route.maxBodyBytes ?? MAX_ROUTE_BODY_BYTES, bodyTimeoutMs),
    );
    if (body === 'timeout') return sendRequestTimeout(response);
    if (body === 'too-large') return send(response, tooLargeAnswer(route));

    const pathParameters: Record<string, string> = {};
    for (const [name, value] of Object.entries(parameters)) {
      try {
        pathParameters[name] = decodeURIComponent(value);
      } catch {
        return send(
          response,
          toProblemResponse(
            new InvalidRequestError('A path parameter is not valid', [
              { name, reason: 'is not valid percent-encoded UTF-8' },
            ]),
          ),
        );
      }
    }
    // As API Gateway does, the gateway states the scheme the client used (its own value, never the client's).
    const headers = toRecord([
      ...headerEntries(request).filter(([name]) => name.toLowerCase() !== 'x-forwarded-proto'),
      ['X-Forwarded-Proto', 'http'] as [string, string],
    ]);
    const query = toRecord(url.searchParams.entries());
    const requestId = response.getHeader('x-amzn-RequestId') as string;
    const event: APIGatewayProxyEvent = {
      resource: route.path,
      path,
      httpMethod: route.method,
      headers: headers.single ?? {},
      multiValueHeaders: headers.multi ?? {},
      queryStringParameters: query.single,
      multiValueQueryStringParameters: query.multi,
      pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
      stageVariables: null,
      ...proxyBody(body),
      requestContext: {
        accountId: ACCOUNT,
        apiId: API_ID,
        authorizer,
        protocol: `HTTP/${request.httpVersion}`,
        httpMethod: route.method,
        identity: {
          sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        } as APIGatewayProxyEvent['requestContext']['identity'],
        // Served at the root, as behind a custom domain: no stage in the path.
        path,
        stage,
        requestId,
        requestTimeEpoch: Date.now(),
        resourceId: route.operationId,
        resourcePath: route.path,
      },
    };
    const functionName = functionNameOf(route.operationId);
    if (!(await mayInvoke({ kind: 'route', functionName, method: route.method, path: url.pathname })))
      return sendGatewayResponse(response, 'API_CONFIGURATION_ERROR');
    let result: APIGatewayProxyResult;
    try {
      const context = lambdaContext(route.operationId);
      result = await inOwnContext(
        functionName,
        context.awsRequestId,
        () => handler(event, context),
        route.entry,
      );
    } catch (error) {
      // A handler that throws past its middleware is a failed Lambda invocation.
      console.error(`${route.operationId} failed`, error);
      return sendGatewayResponse(response, 'INTEGRATION_FAILURE');
    }
    send(response, result);
  };

  return (request, response) => {
    // As API Gateway (REST) does, every answer names its request, gateway refusals included.
    response.setHeader('x-amzn-RequestId', randomUUID());
    dispatch(request, response).catch((error: unknown) => {
      if (error instanceof ClientAbortedError) {
        // Nobody is left to answer: worth a line when looking into a client, never a stack trace.
        logger.debug('The client went away before its request arrived', {
          method: request.method,
          path: new URL(request.url ?? '/', 'http://localhost').pathname,
        });
        response.destroy();
        return;
      }
      console.error('Unhandled error in the local API gateway', error);
      // A handler that throws past its middleware is a Lambda error: API Gateway answers 5XX.
      if (!response.headersSent) sendGatewayResponse(response, 'DEFAULT_5XX');
      else response.destroy();
    });
  };
};
