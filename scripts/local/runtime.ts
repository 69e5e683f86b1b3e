import type { ChildProcess } from 'node:child_process';
import { rename } from 'node:fs/promises';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { watchedTenantRateLimits } from '#adapters/access/tenant-rate-limit-file';
import { MAX_BATCH_STARTS_PER_SECOND } from '#domain/iso20022/start-batch-lifecycles';
import { ROUTES, type Route } from '#routes';
import { wholeNumberEnv } from '#shared/config';
import { problemResponse } from '#shared/problem';
import { markApiRequest } from './api-activity.ts';
import {
  AUTHORIZER_ENTRY,
  type BoundRoute,
  createApiGateway,
  createHttpServer,
  type ProxyHandler,
  type TokenAuthorizer,
} from './api-gateway.ts';
import {
  checkEventLog,
  checkSecrets,
  checkTenantRateLimits,
  DataFolderError,
  damagedTable,
  dataFolderFiles,
  oldKeyLayout,
  tightenDataFolder,
} from './data-folder.ts';
import { type DynaliteProcess, startDynalite } from './dynalite-process.ts';
import { handlerModuleUrl } from './handler-modules.ts';
import { useInvocationContexts } from './invocations.ts';
import { type LocalLifecycle, startLocalLifecycle } from './reconciler.ts';
import { gatewayHandler, installResponseStreaming } from './response-streaming.ts';
import { STARTING_DETAIL } from './starting.ts';
import { checkTableReadable, createDynamoDbClient, ensureTable, TableStuckCreatingError } from './table.ts';
import type { LocalWebhookDelivery } from './webhook-delivery.ts';

export interface LocalRuntimeOptions {
  host: string;
  port: number;
  dataDir: string;
  tableName: string;
  client: { clientId: string; clientSecret: string; tenant: string };
}

export interface LocalRuntime {
  baseUrl: string;
  /** The table's Unix socket, inside the data folder: the table listens on no TCP port. */
  tableSocket: string;
  /** What the start found and did about it (a torn event line, repaired transfers), one line each. */
  notices: string[];
  stop(): Promise<void>;
}

const MAX_SOCKET_PATH_BYTES = 107;
const PROJECT_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The operator's PUBLIC_URL, read before a start sets it: a second start keeps its own default. */
const configuredPublicUrl = process.env.PUBLIC_URL;
const publicUrl = (baseUrl: string): string => configuredPublicUrl || baseUrl;
export const AUDIENCE = 'credit-transfers';

const importHandler = async <T>(entry: string): Promise<T> => {
  const module = (await import(handlerModuleUrl(entry))) as { handler: T };
  return module.handler;
};

const routeHandler = async (route: Route): Promise<ProxyHandler> =>
  gatewayHandler(route, await importHandler<unknown>(route.entry));

const listen = (server: Server, host: string, port: number): Promise<number> =>
  new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolveListen((server.address() as AddressInfo).port));
  });

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise((resolveStop) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolveStop();
    const force = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(force);
      resolveStop();
    });
    child.kill('SIGTERM');
  });

/**
 * Starts the whole service on this machine: dynalite (own process, LevelDB under dataDir),
 * the table from the shared definition, the signing key, the seeded client and the HTTP server
 * running the real handlers. The server answers 503 until everything is ready.
 */
export const startLocalRuntime = async (options: LocalRuntimeOptions): Promise<LocalRuntime> => {
  // First, before any handler or AWS client has run: each invocation keeps its own log context.
  await useInvocationContexts();
  // Settings are read before anything starts: one that cannot be used stops the start at once.
  const reconcileIntervalSeconds = wholeNumberEnv('RECONCILE_INTERVAL_SECONDS', 15, { min: 1, max: 3600 });
  // As API Gateway's cache here: 30 s; tests of revocation shorten it.
  const authorizerCacheSeconds = wholeNumberEnv('LOCAL_AUTHORIZER_CACHE_SECONDS', 30, { min: 0, max: 30 });
  // Off unless asked for, so tests and benchmarks that drive load run as they are.
  const tenantRate = wholeNumberEnv('TENANT_RATE_LIMIT', 0, { min: 0, max: 100_000 });
  const tenantRateLimit = tenantRate > 0 ? { ratePerSecond: tenantRate, burst: 2 * tenantRate } : undefined;
  const notices: string[] = [];
  const tightened = tightenDataFolder(options.dataDir);
  if (tightened !== undefined) notices.push(tightened);
  const files = dataFolderFiles(options.dataDir);
  // The data folder is checked before anything listens: a damaged file stops the start.
  const { cursorSecret, webhookSecretKey } = checkSecrets(options.dataDir);
  checkTenantRateLimits(files.tenantRateLimits);
  // Linux takes at most 107 bytes for a socket's path.
  if (Buffer.byteLength(files.tableSocket) > MAX_SOCKET_PATH_BYTES) {
    throw new DataFolderError(
      `${options.dataDir} is too deep for the table's socket (${files.tableSocket} is over ${MAX_SOCKET_PATH_BYTES} bytes): set DATA_DIR to a shorter path`,
    );
  }
  const tornEvents = checkEventLog(files.events);
  if (tornEvents !== undefined) notices.push(tornEvents);

  const openTable = async (): Promise<DynaliteProcess> => {
    try {
      return await startDynalite({ socket: files.tableSocket, path: files.table });
    } catch (error) {
      // A folder another service runs on is no damage; anything else while opening the files is.
      const inUse = /Another service is running[^\n]*/.exec(String(error))?.[0];
      if (inUse !== undefined) throw new DataFolderError(inUse);
      throw damagedTable(files.table, error);
    }
  };
  let dynalite = await openTable();
  const tableAdmin = () => createDynamoDbClient({ socket: files.tableSocket });

  let listener: RequestListener | undefined;
  const server = createHttpServer((request, response) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname === '/health') {
      response.writeHead(listener ? 200 : 503, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ status: listener ? 'ok' : 'starting' }));
      return;
    }
    markApiRequest();
    if (listener) return listener(request, response);
    const starting = problemResponse(503, 'service_unavailable', STARTING_DETAIL, {
      headers: { 'Retry-After': '1' },
    });
    response.writeHead(starting.statusCode, starting.headers as Record<string, string>);
    response.end(starting.body);
  });
  server.keepAliveTimeout = 65_000;

  let lifecycle: LocalLifecycle | undefined;
  let webhooks: LocalWebhookDelivery | undefined;
  const stop = async () => {
    server.closeAllConnections();
    await new Promise((resolveClose) => server.close(resolveClose));
    await webhooks?.stop();
    await lifecycle?.stop();
    await stopChild(dynalite.child);
  };

  try {
    const port = await listen(server, options.host, options.port);
    const baseUrl = `http://${options.host}:${port}`;
    Object.assign(process.env, {
      AWS_REGION: 'local',
      TABLE_NAME: options.tableName,
      DYNAMODB_SOCKET: files.tableSocket,
      // PUBLIC_URL: the address clients use when something (a proxy) stands in front of this
      // server; every absolute URL the service writes starts with it, never with the Host header.
      PUBLIC_URL: publicUrl(baseUrl),
      ISSUER: publicUrl(baseUrl),
      AUDIENCE,
      LOCAL_SIGNING_KEY_FILE: files.signingKey,
      LOCAL_PREVIOUS_SIGNING_KEY_FILE: files.previousSigningKey,
      // Kept under DATA_DIR, so cursors stay valid across restarts.
      LIST_CURSOR_SECRET: cursorSecret,
      // The local stand-in for the KMS key webhook signing secrets are sealed under (kept under DATA_DIR).
      LOCAL_WEBHOOK_SECRET_KEY: webhookSecretKey,
      // The local event bus: one JSON line per status change.
      EVENTS_FILE: files.events,
      // EMF metric lines only mean something to CloudWatch; set to false to see them.
      POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
      // Node timers reach 24.8 days at most: a longer hold is left to the reconciler.
      LIFECYCLE_MAX_HOLD_SECONDS: process.env.LIFECYCLE_MAX_HOLD_SECONDS ?? String(20 * 86_400),
      // Steps run in this process, each submission bounded by the connector's deadline (8 s): a
      // claim older than this has no holder, and a restart after a crash resolves it within a
      // reconciler run or two rather than Lambda's two minutes.
      SUBMISSION_LEASE_SECONDS: process.env.SUBMISSION_LEASE_SECONDS ?? '15',
      // Unpaced: the local runner queues executions itself (no Lambda to throttle), and a paced
      // 2,000-transfer batch would hold a stop for two minutes. BATCH_STARTS_PER_SECOND paces it
      // as prod does (lib/concurrency.ts) to try that out.
      BATCH_STARTS_PER_SECOND: process.env.BATCH_STARTS_PER_SECOND ?? String(MAX_BATCH_STARTS_PER_SECOND),
      // A developer's own receiver on this machine may be a webhook endpoint (never on AWS).
      WEBHOOK_ALLOW_LOCAL_RECEIVERS: 'true',
    });

    let oldLayoutItems = 0;
    try {
      try {
        await ensureTable(tableAdmin(), options.tableName);
      } catch (error) {
        if (!(error instanceof TableStuckCreatingError)) throw error;
        // The first start was cut short while making the table: nothing was stored yet. The
        // folder is kept aside all the same, and the table made again.
        const aside = `${files.table}.interrupted-${Date.now()}`;
        await stopChild(dynalite.child);
        await rename(files.table, aside);
        notices.push(
          `${files.table}: the table was still being created when the service stopped, so it held nothing; it was moved to ${aside} and made again`,
        );
        dynalite = await openTable();
        await ensureTable(tableAdmin(), options.tableName);
      }
      oldLayoutItems = await checkTableReadable(tableAdmin(), options.tableName);
    } catch (error) {
      // dynalite stops on some damage (a corrupt block): what it said is the better reason.
      const said =
        dynalite.child.exitCode !== null
          ? /(?:Corruption|IO error|Invalid argument): [^\]\n]*/.exec(dynalite.errors())?.[0]
          : undefined;
      throw damagedTable(files.table, said ?? error);
    }
    if (oldLayoutItems > 0) throw oldKeyLayout(files.table, oldLayoutItems);
    // Before the first AWS client is made: each function's calls are checked against its IAM.
    (await import('./iam-enforcement.ts')).useIamEnforcement(options.tableName);
    const { registerClient } = await import('#domain/access/register-client');
    const { DynamoDbClientStore } = await import('#adapters/access/client-store');
    const { documentClient, tableName } = await import('#adapters/aws/dynamodb-client');
    await registerClient(new DynamoDbClientStore(documentClient(), tableName()), {
      clientId: options.client.clientId,
      secret: options.client.clientSecret,
      scopes: [...(await import('#domain/access/scopes')).SCOPES],
      tenant: options.client.tenant,
    });
    lifecycle = await startLocalLifecycle({
      projectRoot: PROJECT_ROOT,
      dataDir: options.dataDir,
      reconcileIntervalSeconds,
      enabled: process.env.LOCAL_LIFECYCLE !== 'off',
    });
    if (lifecycle.repaired !== undefined) {
      notices.push(
        `Recovery check: ${lifecycle.repaired} transfer(s) whose record and recovery entry disagreed (a crash lost part of a write) repaired from the record`,
      );
    }

    const runner = lifecycle.runner;
    webhooks = await (await import('./webhook-delivery.ts')).startLocalWebhookDelivery({
      eventsFile: files.events,
      ...(runner && { workflowBacklogged: () => runner.queued > 0 }),
    });
    if (webhooks.released > 0) {
      notices.push(
        `Webhooks: ${webhooks.released} delivery attempt(s) cut short by the last stop are due again`,
      );
    }

    const routes: BoundRoute[] = [];
    // Before any handler loads: a streaming one calls `awslambda` as its module is evaluated.
    installResponseStreaming();
    for (const route of ROUTES) routes.push({ route, handler: await routeHandler(route) });
    const { isAllowed } = await import('#adapters/access/route-policy');
    listener = createApiGateway({
      routes,
      authorizer: await importHandler<TokenAuthorizer>(AUTHORIZER_ENTRY),
      isAllowed,
      authorizerCacheSeconds,
      ...(tenantRateLimit !== undefined && {
        tenantRateLimit,
        tenantRateLimits: watchedTenantRateLimits(files.tenantRateLimits),
      }),
    });
    return { baseUrl, tableSocket: files.tableSocket, notices, stop };
  } catch (error) {
    await stop();
    throw error;
  }
};
