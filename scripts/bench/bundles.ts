import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ensureLocalSigningKey } from '#adapters/signer-local';
import { startDynalite } from '#local/dynalite-process';
import { createDynamoDbClient, ensureTable } from '#local/table';
import { ROUTES } from '#routes';
import { RECONCILER_ENTRY, WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { BUNDLE_OPTIONS, routeAssets } from '../../lib/constructs/bundling.ts';
import { fixed } from './support.ts';

/**
 * Every function's bundle, built with the CDK's own esbuild options: its minified size, and the
 * time a fresh Node process takes to load it and answer a first invocation, next to an empty
 * handler built the same way (ratio target: at most 3). Nothing is left external: the bundle is
 * all the function loads.
 *
 * The first invocation is one a real first request makes without AWS: a request the handler
 * refuses with a 4xx before any network call (the authorizer: a malformed token; the workflow
 * tasks: an input they refuse), a public document it answers from memory, and for the
 * reconciler a run against an empty local dynalite table.
 */
const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Under the project, beside node_modules, as the CDK builds them.
const OUT_DIR = join(PROJECT_ROOT, 'node_modules/.cache/bench-bundles');
const EMPTY_ENTRY = join(OUT_DIR, 'empty-handler.ts');

const caller = { tenant: 'bench', clientId: 'bench', scope: 'transactions:read transactions:write' };

const httpEvent = (method: string, path: string, extra: Record<string, unknown> = {}) => ({
  httpMethod: method,
  path,
  resource: path,
  headers: {},
  multiValueHeaders: {},
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  pathParameters: null,
  stageVariables: null,
  body: null,
  isBase64Encoded: false,
  requestContext: { requestId: 'bench', path, authorizer: caller, httpMethod: method, resourcePath: path },
  ...extra,
});

/** The first event each function is invoked with; a route without one here is refused. */
const FIRST_EVENTS: Record<string, unknown> = {
  issueToken: httpEvent('POST', '/oauth/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=password',
  }),
  getJsonWebKeySet: httpEvent('GET', '/.well-known/jwks.json'),
  getAuthorizationServerMetadata: httpEvent('GET', '/.well-known/oauth-authorization-server'),
  getOpenIdConfiguration: httpEvent('GET', '/.well-known/openid-configuration'),
  listCreditTransfers: httpEvent('GET', '/v1/payments/credit-transfers', {
    queryStringParameters: { limit: '0' },
    multiValueQueryStringParameters: { limit: ['0'] },
  }),
  initiateCreditTransfer: httpEvent('POST', '/v1/payments/credit-transfers', {
    headers: { 'content-type': 'application/json' },
    body: '{"amount":"-1"}',
  }),
  getCreditTransferStatus: httpEvent('GET', '/v1/payments/credit-transfers/{paymentId}/status', {
    pathParameters: { paymentId: 'x'.repeat(37) },
  }),
  cancelCreditTransfer: httpEvent('POST', '/v1/payments/credit-transfers/{paymentId}/cancellation', {
    pathParameters: { paymentId: 'x'.repeat(37) },
  }),
  getOpenApiDocument: httpEvent('GET', '/openapi.json'),
  getReferencePage: httpEvent('GET', '/docs'),
  getReferencePageScript: httpEvent('GET', '/docs/scalar.js'),
  authorizer: { type: 'TOKEN', authorizationToken: 'Bearer not-a-token', methodArn: 'arn:aws:execute-api:x' },
  workflowTask: { paymentId: 42 },
  reconciler: {},
};

interface BenchFunction {
  name: string;
  entry: string;
  event: unknown;
}

const benchFunctions = (): BenchFunction[] => [
  ...ROUTES.map((route) => ({
    name: route.operationId,
    entry: route.entry,
    event: FIRST_EVENTS[route.operationId],
  })),
  { name: 'authorizer', entry: 'lambdas/auth/authorizer.ts', event: FIRST_EVENTS.authorizer },
  ...Object.entries(WORKFLOW_FUNCTIONS).map(([name, fn]) => ({
    name,
    entry: fn.entry,
    event: FIRST_EVENTS.workflowTask,
  })),
  { name: 'reconciler', entry: RECONCILER_ENTRY, event: FIRST_EVENTS.reconciler },
];

/** Builds like the CDK does, into its own directory with its static assets beside it. */
const bundle = async (name: string, entry: string): Promise<{ file: string; bytes: number }> => {
  const dir = join(OUT_DIR, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'index.mjs');
  await build({
    ...BUNDLE_OPTIONS,
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    external: [...BUNDLE_OPTIONS.external],
    banner: { js: BUNDLE_OPTIONS.banner },
    entryPoints: [join(PROJECT_ROOT, entry)],
    bundle: true,
    outfile: file,
    logLevel: 'error',
  });
  for (const asset of routeAssets(entry))
    copyFileSync(join(PROJECT_ROOT, asset.source), join(dir, asset.file));
  return { file, bytes: statSync(file).size };
};

const CONTEXT = {
  awsRequestId: 'bench',
  functionName: 'bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:bench',
  memoryLimitInMB: '1024',
  logGroupName: 'bench',
  logStreamName: 'bench',
};

/** In a fresh process: milliseconds from before the import to the end of the first invocation. */
const PROBE = `
const started = performance.now();
const { handler } = await import(process.env.BENCH_BUNDLE);
const context = { ...${JSON.stringify(CONTEXT)}, getRemainingTimeInMillis: () => 10000 };
let outcome;
try {
  const result = await handler(JSON.parse(process.env.BENCH_EVENT), context);
  outcome = result?.statusCode ?? 'ok';
} catch (error) {
  outcome = \`\${error?.name}: \${error?.message}\`.slice(0, 60);
}
process.stdout.write(JSON.stringify({ ms: performance.now() - started, outcome }));
`;

/** `ms` inside the process (import + first invocation); `wallMs` from spawn to the answer, Node's start included. */
const loadAndInvoke = (file: string, event: unknown, env: Record<string, string>) =>
  new Promise<{ ms: number; wallMs: number; outcome: string }>((resolve, reject) => {
    const spawned = performance.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE], {
      env: { ...process.env, ...env, BENCH_BUNDLE: file, BENCH_EVENT: JSON.stringify(event ?? {}) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let wallMs = 0;
    child.stdout.on('data', (chunk) => {
      out += chunk;
      wallMs = performance.now() - spawned;
    });
    child.on('error', reject);
    child.on('exit', () => {
      try {
        resolve({ ...JSON.parse(out.slice(out.lastIndexOf('{"ms"'))), wallMs });
      } catch {
        reject(new Error(`No timing from ${file}: ${out.slice(-500)}`));
      }
    });
  });

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

export const benchBundles = async (options: { runs: number }): Promise<string[]> => {
  rmSync(OUT_DIR, { recursive: true, force: true });
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(EMPTY_ENTRY, 'export const handler = async () => ({ statusCode: 204 });\n');
  const empty = await bundle('empty-handler', 'node_modules/.cache/bench-bundles/empty-handler.ts');

  const dynalite = await startDynalite({
    socket: join(OUT_DIR, 'dynamodb.sock'),
    path: join(OUT_DIR, 'dynamodb'),
  });
  const lines: string[] = [];
  try {
    const tableName = 'bench-bundles';
    await ensureTable(createDynamoDbClient({ socket: dynalite.socket }), tableName);
    const keyFile = join(OUT_DIR, 'signing-key.pem');
    ensureLocalSigningKey(keyFile);
    const env = {
      AWS_REGION: 'local',
      TABLE_NAME: tableName,
      DYNAMODB_SOCKET: dynalite.socket,
      ISSUER: 'http://127.0.0.1',
      AUDIENCE: 'credit-transfers',
      LOCAL_SIGNING_KEY_FILE: keyFile,
      LIST_CURSOR_SECRET: randomBytes(32).toString('base64url'),
      STATE_MACHINE_ARN: 'arn:aws:states:local:000000000000:stateMachine:bench',
      EVENT_BUS_NAME: 'bench',
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    };

    lines.push(
      `\n## Function bundles (esbuild options of lib/constructs/bundling.ts; ${options.runs} fresh processes each, alternating with an empty handler)`,
      'load+1st: import and first invocation inside the process (median); process: spawn to answer, Node start included, and the empty handler the same (medians);',
      'ratio: the median of the pairwise ratios of process times, each run against the empty handler run just before it',
      `${'function'.padEnd(32)} ${'minified'.padStart(10)}  ${'load+1st'.padStart(9)}  ${'process'.padStart(9)} / ${'empty'.padStart(7)}  ${'ratio'.padStart(5)}  first answer`,
      `${'(empty handler)'.padEnd(32)} ${`${fixed(empty.bytes / 1024, 1)} KB`.padStart(10)}`,
    );
    for (const fn of benchFunctions()) {
      if (fn.event === undefined) throw new Error(`scripts/bench/bundles.ts: no first event for ${fn.name}`);
      const built = await bundle(fn.name, fn.entry);
      const emptyWall: number[] = [];
      const inProcess: number[] = [];
      const wall: number[] = [];
      const wallRatios: number[] = [];
      let outcome = '';
      for (let run = 0; run < options.runs; run++) {
        const baseline = await loadAndInvoke(empty.file, {}, env);
        const measured = await loadAndInvoke(built.file, fn.event, env);
        emptyWall.push(baseline.wallMs);
        inProcess.push(measured.ms);
        wall.push(measured.wallMs);
        wallRatios.push(measured.wallMs / baseline.wallMs);
        outcome = String(measured.outcome);
      }
      lines.push(
        `${fn.name.padEnd(32)} ${`${fixed(built.bytes / 1024, 1)} KB`.padStart(10)}  ${`${fixed(median(inProcess), 0)} ms`.padStart(9)}  ${`${fixed(median(wall), 0)} ms`.padStart(9)} / ${`${fixed(median(emptyWall), 0)} ms`.padStart(7)}  ${fixed(median(wallRatios), 2).padStart(5)}  ${outcome}`,
      );
    }
    lines.push('targets: minified <= 250 KB, ratio <= 3');
  } finally {
    dynalite.child.kill('SIGTERM');
  }
  return lines;
};

// `npx tsx scripts/bench/bundles.ts` runs this section alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const line of await benchBundles({ runs: Number(process.env.BENCH_BUNDLE_RUNS ?? 9) }))
    console.log(line);
}
