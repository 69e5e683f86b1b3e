import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import {
  collectOutput,
  LOCAL_CLIENT,
  type LocalService as ServiceProcess,
  scriptArguments,
  startLocalService as startServiceProcess,
} from '#local/service-process';
import {
  assertNoContractViolations,
  type ContractProxy,
  type ContractViolation,
  startContractProxy,
} from './contract-proxy.ts';

export { LOCAL_CLIENT } from '#local/service-process';

export interface LocalService extends ServiceProcess {
  /** The service itself, for tests that must speak to it without the contract proxy. */
  serviceUrl: string;
  /** Responses so far that break the OpenAPI document. */
  contractViolations(): Promise<ContractViolation[]>;
}

/**
 * Starts the service as `npm start` does, behind the contract proxy: `baseUrl` is the proxy,
 * which checks every response against the service's /openapi.json. `stop` and `kill` fail the
 * suite when a response broke the document. `env.PORT` is the port clients use (the proxy's),
 * and the service announces the proxy as its address (issuer, links).
 *
 * `proxy`: a proxy that outlives this service (its public address kept across a restart), which
 * `stop` and `kill` check but leave open; without it the service gets a proxy of its own, closed
 * with it.
 */
export const startLocalService = async (
  options: {
    dataDir?: string;
    env?: Record<string, string>;
    fromSources?: boolean;
    proxy?: ContractProxy;
  } = {},
): Promise<LocalService> => {
  const { PORT: publicPort, ...env } = options.env ?? {};
  const proxy = options.proxy ?? (await startContractProxy(Number(publicPort ?? 0)));
  const closeOwnProxy = () => (options.proxy === undefined ? proxy.close() : Promise.resolve());
  let service: ServiceProcess;
  try {
    service = await startServiceProcess({
      ...(options.dataDir !== undefined && { dataDir: options.dataDir }),
      env: { ...env, PUBLIC_URL: proxy.url },
      fromSources: options.fromSources ?? false,
    });
    await proxy.connect(service.baseUrl);
  } catch (error) {
    await closeOwnProxy();
    throw error;
  }
  const finish = async (end: () => Promise<void>) => {
    await end();
    const violations = await proxy.violations();
    await closeOwnProxy();
    assertNoContractViolations(violations);
  };
  return {
    ...service,
    baseUrl: proxy.url,
    serviceUrl: service.baseUrl,
    contractViolations: () => proxy.violations(),
    stop: () => finish(service.stop),
    kill: () => finish(service.kill),
  };
};

/** Whether anything answers HTTP on the Unix socket (the table's, when its process runs). */
export const socketAnswers = (socket: string): Promise<boolean> =>
  new Promise((resolve) => {
    const outgoing = request(
      { createConnection: () => connect(socket), path: '/', method: 'GET' },
      (reply) => {
        reply.resume();
        resolve(true);
      },
    );
    outgoing.on('error', () => resolve(false));
    outgoing.end();
  });

/** Waits until nothing answers on the socket (at most 10 s); false if something still does. */
export const socketGone = async (socket: string): Promise<boolean> => {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (!(await socketAnswers(socket))) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
};

export const removeDataDir = (dataDir: string) => rm(dataDir, { recursive: true, force: true });

export const requestToken = async (
  baseUrl: string,
  scope?: string,
  client: { clientId: string; clientSecret: string } = LOCAL_CLIENT,
): Promise<string> => {
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      ...(scope !== undefined && { scope }),
    }),
  });
  if (response.status !== 200)
    throw new Error(`token request failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
};

export interface JsonReply {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect replies field by field
  body: any;
}

export const callApi = async (
  baseUrl: string,
  path: string,
  options: {
    method?: string;
    token?: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<JsonReply> => {
  const hasBody = options.body !== undefined || options.rawBody !== undefined;
  const response = await fetch(`${baseUrl}${path}`, {
    method: options.method ?? (hasBody ? 'POST' : 'GET'),
    headers: {
      ...(hasBody && { 'Content-Type': 'application/json' }),
      ...(options.token !== undefined && { Authorization: `Bearer ${options.token}` }),
      ...options.headers,
    },
    ...(hasBody && { body: options.rawBody ?? JSON.stringify(options.body) }),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body };
};

/** Registers a client in the running service's store through `npm run client:create`'s script. */
export const createClient = async (
  service: LocalService,
  client: { clientId: string; clientSecret: string; scope: string; tenant: string },
): Promise<void> => {
  const child = spawn(
    process.execPath,
    [
      ...scriptArguments('scripts/client-create.ts'),
      '--client-id',
      client.clientId,
      '--client-secret',
      client.clientSecret,
      '--scope',
      client.scope,
      '--tenant',
      client.tenant,
    ],
    {
      // DATA_DIR: the audit event goes to the service's own events file.
      env: { ...process.env, DATA_DIR: service.dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output = collectOutput(child);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`client:create failed (${code}): ${output()}`);
};
