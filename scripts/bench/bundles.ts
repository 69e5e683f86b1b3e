import { spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { copyFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startDynalite } from '#local/dynalite-process';
import { createDynamoDbClient, ensureTable } from '#local/table';
import { ROUTES } from '#routes';
import { RECONCILER_ENTRY, WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { BUNDLE_OPTIONS, routeAssets } from '../../lib/constructs/bundling.ts';
import { minimalCreditTransfer } from '../../test/fixtures/credit-transfers.ts';
import { kmsRsaSignatureOfDigest } from '../../test/support/kms-signature.ts';
import { type Answer, awsError, ok, startAwsJsonStub } from '../../test/unit/aws/aws-json-stub.ts';
import { LAMBDA_INVOKE } from './lambda-invoke.ts';
import { profileSummary } from './profile-summary.ts';
import { benchCount, fixed } from './support.ts';

/**
 * Every function's bundle, built with the CDK's own esbuild options: its minified size, and the
 * time a fresh Node process takes to load it and answer a first invocation, as a ratio to its own
 * floor (a handler making the same AWS calls through the same libraries: Powertools, middy, zod,
 * the document client) and, for comparison, to a reference handler that makes one DynamoDB
 * GetItem with the same bundled AWS SDK and credential provider. Target: at most 1.3 times the
 * floor.
 *
 * The first invocation does the function's real work, AWS calls included, as on Lambda: the
 * functions find DynamoDB (a local dynalite), Step Functions, EventBridge and KMS (a local
 * stand-in, signing tokens with an RSA key as the stack's KMS key does) through the SDK's own
 * AWS_ENDPOINT_URL_* variables and take their credentials from the environment, through the
 * credential provider of the bundles. A valid token request, an
 * initiation that writes, a status read that finds its transfer, a cancellation, a list page,
 * the authorizer with a valid token, and each workflow step on a transfer its predecessors
 * (run in this process, from source) brought to it.
 */
const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Under the project, beside node_modules, as the CDK builds them.
export const OUT_DIR = join(PROJECT_ROOT, 'node_modules/.cache/bench-bundles');
const REFERENCE_ENTRY = join(OUT_DIR, 'reference-handler.ts');
/** BENCH_BUNDLE_PROFILE=<dir>: CPU profiles of the measured processes, and source maps to read them. */
const PROFILE_ROOT = process.env.BENCH_BUNDLE_PROFILE;

/** The floor: one GetItem, with nothing but the SDK's DynamoDB client. */
const REFERENCE_HANDLER = `import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
const client = new DynamoDBClient({});
export const handler = async () => {
  const { Item } = await client.send(
    new GetItemCommand({ TableName: process.env.TABLE_NAME, Key: { pk: { S: 'bench' }, sk: { S: 'reference' } } }),
  );
  return { statusCode: Item === undefined ? 404 : 200 };
};
`;

/**
 * What the design's libraries cost by themselves: the reference's GetItem, made through the
 * document client, inside a middy handler that parses its query with zod and logs and counts
 * with Powertools, as every function does; none of the service's own code.
 */
const LIBRARIES_ENTRY = join(OUT_DIR, 'libraries-handler.ts');
const LIBRARIES_HANDLER = `import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import * as z from 'zod/mini';
const logger = new Logger({ serviceName: 'bench' });
const metrics = new Metrics({ namespace: 'bench', serviceName: 'bench' });
const table = DynamoDBDocument.from(new DynamoDBClient({}));
const query = z.object({ limit: z.optional(z.string()) });
export const handler = middy(async (event) => {
  query.parse(event.queryStringParameters ?? {});
  const { Item } = await table.get({ TableName: process.env.TABLE_NAME, Key: { pk: 'bench', sk: 'reference' } });
  logger.info('read', { found: Item !== undefined });
  metrics.addMetric('reads', 'Count', 1);
  return { statusCode: Item === undefined ? 404 : 200 };
});
`;

/** AWS operations one process made, in order, as `Service.Operation`. */
type Calls = string[];

/** The libraries a floor handler may use, by the package its bundle holds them under. */
const FLOOR_LIBRARIES = {
  middy: 'node_modules/@middy/core/',
  zod: 'node_modules/zod/',
  logger: 'node_modules/@aws-lambda-powertools/logger/',
  metrics: 'node_modules/@aws-lambda-powertools/metrics/',
  tracer: 'node_modules/@aws-lambda-powertools/tracer/',
  documentClient: 'node_modules/@aws-sdk/lib-dynamodb/',
} as const;
type FloorLibrary = keyof typeof FLOOR_LIBRARIES;

/** Which of the floor's libraries a bundle holds (from esbuild's metafile). */
const librariesOf = (inputs: readonly string[]): Set<FloorLibrary> =>
  new Set(
    (Object.keys(FLOOR_LIBRARIES) as FloorLibrary[]).filter((library) =>
      inputs.some((input) => input.includes(FLOOR_LIBRARIES[library])),
    ),
  );

/**
 * A function's floor: a handler making the same AWS calls as its first invocation made (one client
 * per service; each DynamoDB call a GetItem, reads standing in for writes; each Step Functions
 * call a StartExecution, each EventBridge call a PutEvents, each KMS call a GetPublicKey),
 * through the libraries the function's bundle holds, used as the function uses them
 * (lambdas/shared/observability.ts, lambdas/adapters/aws/aws-clients.ts): the Tracer made only
 * where tracing is possible and capturing every client, the Powertools logger with the Lambda
 * context and one log line, metrics flushed, zod parsing the event, middy around an HTTP handler
 * (streaming its answer where the route is streamed), and the document client. None of the
 * service's own code: what the function costs beyond it is its own.
 */
const floorHandler = (calls: Calls, libraries: ReadonlySet<FloorLibrary>, streamed: boolean): string => {
  const count = (service: string) => calls.filter((call) => call.startsWith(`${service}.`)).length;
  const [table, sfn, events, kms] = [count('DynamoDB'), count('SFN'), count('EventBridge'), count('KMS')];
  const has = (library: FloorLibrary) => libraries.has(library);
  const middy = has('middy');
  const captured = (client: string) => (has('tracer') ? `capture(${client})` : client);
  return [
    table > 0 ? "import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';" : '',
    table > 0 && has('documentClient') ? "import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';" : '',
    sfn > 0 ? "import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';" : '',
    events > 0 ? "import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';" : '',
    kms > 0 ? "import { GetPublicKeyCommand, KMSClient } from '@aws-sdk/client-kms';" : '',
    has('logger') ? "import { Logger } from '@aws-lambda-powertools/logger';" : '',
    has('logger') && middy
      ? "import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';"
      : '',
    has('tracer') && middy
      ? "import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';"
      : '',
    has('metrics') ? "import { Metrics } from '@aws-lambda-powertools/metrics';" : '',
    middy ? "import middy from '@middy/core';" : '',
    middy && streamed
      ? "import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';"
      : '',
    has('zod') ? "import * as z from 'zod/mini';" : '',
    has('tracer')
      ? "const tracer = (process.env.AWS_EXECUTION_ENV ?? '') !== '' ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ serviceName: 'floor' }) : undefined;"
      : '',
    has('tracer')
      ? 'const capture = (client) => { tracer?.captureAWSv3Client(client); return client; };'
      : '',
    has('logger') ? "const logger = new Logger({ serviceName: 'floor' });" : '',
    has('metrics') ? "const metrics = new Metrics({ namespace: 'floor', serviceName: 'floor' });" : '',
    has('zod')
      ? 'const input = z.object({ path: z.optional(z.string()), tenant: z.optional(z.string()) });'
      : '',
    table > 0 ? `const dynamodb = ${captured('new DynamoDBClient({})')};` : '',
    table > 0 && has('documentClient') ? 'const table = DynamoDBDocument.from(dynamodb);' : '',
    sfn > 0 ? `const sfn = ${captured('new SFNClient({})')};` : '',
    events > 0 ? `const events = ${captured('new EventBridgeClient({})')};` : '',
    kms > 0 ? `const kms = ${captured('new KMSClient({})')};` : '',
    'const work = async (event, context) => {',
    has('zod') ? '  input.parse(event ?? {});' : '',
    has('logger') && !middy ? '  logger.addContext(context);' : '',
    table > 0 ? `  for (let i = 0; i < ${table}; i++)` : '',
    table === 0
      ? ''
      : has('documentClient')
        ? "    await table.get({ TableName: process.env.TABLE_NAME, Key: { pk: 'bench', sk: 'reference' } });"
        : "    await dynamodb.send(new GetItemCommand({ TableName: process.env.TABLE_NAME, Key: { pk: { S: 'bench' }, sk: { S: 'reference' } } }));",
    sfn > 0 ? `  for (let i = 0; i < ${sfn}; i++)` : '',
    sfn > 0
      ? "    await sfn.send(new StartExecutionCommand({ stateMachineArn: process.env.STATE_MACHINE_ARN, name: 'floor-' + Date.now() + '-' + i, input: '{}' }));"
      : '',
    events > 0 ? `  for (let i = 0; i < ${events}; i++)` : '',
    events > 0
      ? "    await events.send(new PutEventsCommand({ Entries: [{ Source: 'bench', DetailType: 'bench', Detail: '{}', EventBusName: process.env.EVENT_BUS_NAME }] }));"
      : '',
    kms > 0 ? `  for (let i = 0; i < ${kms}; i++)` : '',
    kms > 0 ? '    await kms.send(new GetPublicKeyCommand({ KeyId: process.env.SIGNING_KEY_IDS }));' : '',
    has('logger') ? "  logger.info('Request handled', { statusCode: 200 });" : '',
    has('metrics') ? "  metrics.addMetric('floor', 'Count', 1);" : '',
    has('metrics') ? '  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();' : '',
    '  return { statusCode: 200 };',
    '};',
    middy
      ? `export const handler = middy(work${streamed ? ', { executionMode: executionModeStreamifyResponse }' : ''})${has('tracer') ? '.use(tracer === undefined ? [] : [captureLambdaHandler(tracer, { captureResponse: false })])' : ''}${has('logger') ? '.use(injectLambdaContext(logger, { resetKeys: true }))' : ''};`
      : 'export const handler = work;',
    '',
  ]
    .filter((line) => line !== '')
    .join('\n');
};

/** `DynamoDB.GetItem x2, SFN.StartExecution` */
const describeCalls = (calls: Calls): string => {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call, (counts.get(call) ?? 0) + 1);
  return [...counts].map(([call, n]) => (n > 1 ? `${call} x${n}` : call)).join(', ') || 'none';
};

/**
 * The token endpoint's client-secret check alone, as it runs it: two scrypt derivations in
 * parallel (the client's hash and a stand-in), with the parameters the secret was hashed with.
 */
const SECRET_CHECK_ENTRY = join(OUT_DIR, 'secret-check.ts');
const SECRET_CHECK_HANDLER = `import { verifyClientSecretAgainst } from ${JSON.stringify(join(PROJECT_ROOT, 'lambdas/domain/access/client-secret.ts'))};
export const handler = async (event) => ({ status: String(await verifyClientSecretAgainst(event.secret, [event.hash])) });
`;

const TENANT = 'bench';
const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const caller = {
  tenant: TENANT,
  clientId: CLIENT_ID,
  scope: 'transactions:read transactions:write webhooks:manage',
};

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

const initiationEvent = (fields: Record<string, unknown> = {}) =>
  httpEvent('POST', '/v1/payments/credit-transfers', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...minimalCreditTransfer(), ...fields }),
  });

type Handler = (event: unknown, context: unknown) => Promise<unknown>;
export const CONTEXT = {
  awsRequestId: 'bench',
  functionName: 'bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:000000000000:function:bench',
  memoryLimitInMB: '1024',
  logGroupName: 'bench',
  logStreamName: 'bench',
};
const inProcess = async (entry: string, event: unknown): Promise<unknown> => {
  const { handler } = (await import(join(PROJECT_ROOT, entry))) as { handler: Handler };
  return handler(event, { ...CONTEXT, getRemainingTimeInMillis: () => 10_000 });
};

/** Invokes a route from source in this process; its answer's body, when it has the expected status. */
const answered = async (entry: string, event: unknown, status: number): Promise<Record<string, string>> => {
  const result = (await inProcess(entry, event)) as { statusCode: number; body: string };
  if (result.statusCode !== status)
    throw new Error(`bench ${entry} answered ${result.statusCode}: ${result.body}`);
  return JSON.parse(result.body) as Record<string, string>;
};

/** A new transfer of the bench tenant, initiated from source in this process. */
const newTransfer = async (fields: Record<string, unknown> = {}): Promise<string> =>
  (await answered('lambdas/api/initiate-credit-transfer.ts', initiationEvent(fields), 202)).paymentId ?? '';

const tomorrow = (): string => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

/**
 * The state a workflow step gets: a new transfer, brought there by the steps before it. The
 * submission step on its own follows a value-date hold, so its transfer has tomorrow's date.
 */
const stateFor = async (step: keyof typeof WORKFLOW_FUNCTIONS): Promise<unknown> => {
  const held = step === 'submitToClearing';
  const paymentId = await newTransfer(held ? { valueDate: tomorrow() } : {});
  let state: unknown = { tenant: caller.tenant, paymentId, trigger: 'initiation' };
  const before: (keyof typeof WORKFLOW_FUNCTIONS)[] =
    step === 'validateCheckAndSubmit' ? [] : ['validateCheckAndSubmit'];
  for (const previous of before) {
    state = await inProcess(WORKFLOW_FUNCTIONS[previous].entry, state);
  }
  return state;
};

/**
 * The reconciler's table: its own, so that what the other functions' runs left behind (hundreds
 * of transfers whose workflow never ran here, due by the time the reconciler is measured) is not
 * in its way. Each run finds what a scheduled run typically finds: one transfer past its due time.
 */
const RECONCILER_TABLE = 'bench-bundles-reconciler';

/** A transfer accepted STALL_SECONDS and a minute ago whose workflow never started (no starter given). */
const lostTransfer = async (): Promise<void> => {
  const { initiateCreditTransfer } = await import('#domain/credit-transfers/initiate-credit-transfer');
  const { DynamoDbLifecycleStore } = await import(
    '#adapters/credit-transfers/credit-transfer-lifecycle-store'
  );
  const { documentClient } = await import('#adapters/aws/dynamodb-client');
  const { STALL_SECONDS } = await import('#domain/credit-transfers/lifecycle');
  const acceptedAt = new Date(Date.now() - (STALL_SECONDS + 60) * 1000);
  await initiateCreditTransfer(
    {
      store: new DynamoDbLifecycleStore(documentClient(), RECONCILER_TABLE),
      clock: { now: () => acceptedAt },
    },
    { tenant: TENANT, clientId: CLIENT_ID, body: minimalCreditTransfer(), servicer: {} },
  );
};

const WEBHOOK_ENDPOINTS = '/v1/webhook-endpoints';
const createEndpointEvent = () =>
  httpEvent('POST', WEBHOOK_ENDPOINTS, {
    headers: { 'content-type': 'application/json' },
    // A receiver on this machine, as the local runtime allows (WEBHOOK_ALLOW_LOCAL_RECEIVERS).
    body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks' }),
  });

/** A new webhook endpoint of the bench tenant, registered from source in this process. */
const newEndpoint = async (): Promise<string> =>
  (await answered('lambdas/api/create-webhook-endpoint.ts', createEndpointEvent(), 201)).id ?? '';

/** A request to one endpoint's path, for an endpoint registered for it. */
const endpointEvent = async (method: string, path = '', body?: unknown) =>
  httpEvent(method, `${WEBHOOK_ENDPOINTS}/{id}${path}`, {
    pathParameters: { id: await newEndpoint() },
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  });

/**
 * One status event from the bus as the delivery queue hands it over, of a tenant with no
 * endpoint: the event is kept and no delivery is tried (no receiver's answer in the figure).
 */
const statusEventBatch = async () => ({
  Records: [
    {
      messageId: randomUUID(),
      body: JSON.stringify({
        id: randomUUID(),
        detail: {
          eventId: randomUUID(),
          tenant: 'bench-no-endpoints',
          paymentId: randomUUID(),
          sequence: 0,
          status: 'Received',
          date: new Date().toISOString(),
          actor: 'bench',
        },
      }),
    },
  ],
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const tokenEvent = () =>
  httpEvent('POST', '/oauth/token', {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic(CLIENT_ID, CLIENT_SECRET),
    },
    body: 'grant_type=client_credentials',
  });

/** The first event each function is invoked with, made anew for each run; a route without one is refused. */
const FIRST_EVENTS: Record<string, () => Promise<unknown>> = {
  issueToken: async () => tokenEvent(),
  getJsonWebKeySet: async () => httpEvent('GET', '/.well-known/jwks.json'),
  getAuthorizationServerMetadata: async () => httpEvent('GET', '/.well-known/oauth-authorization-server'),
  getOpenIdConfiguration: async () => httpEvent('GET', '/.well-known/openid-configuration'),
  listCreditTransfers: async () =>
    httpEvent('GET', '/v1/payments/credit-transfers', {
      queryStringParameters: { limit: '10' },
      multiValueQueryStringParameters: { limit: ['10'] },
    }),
  initiateCreditTransfer: async () => initiationEvent(),
  getCreditTransferStatus: async () =>
    httpEvent('GET', '/v1/payments/credit-transfers/{paymentId}/status', {
      pathParameters: { paymentId: await newTransfer() },
    }),
  getCreditTransferNotification: async () =>
    httpEvent('GET', '/v1/payments/credit-transfers/{paymentId}/notification', {
      pathParameters: { paymentId: await newTransfer() },
    }),
  listCreditTransferBatches: async () => httpEvent('GET', '/v1/payments/credit-transfer-batches'),
  cancelCreditTransfer: async () =>
    httpEvent('POST', '/v1/payments/credit-transfers/{paymentId}/cancellation', {
      pathParameters: { paymentId: await newTransfer() },
    }),
  getOpenApiDocument: async () => httpEvent('GET', '/openapi.json'),
  getReferencePage: async () => httpEvent('GET', '/docs'),
  getReferencePageScript: async () => httpEvent('GET', '/docs/scalar.js'),
  authorizer: async () => {
    const answer = (await inProcess('lambdas/auth/issue-token.ts', tokenEvent())) as { body: string };
    const { access_token } = JSON.parse(answer.body) as { access_token: string };
    return {
      type: 'TOKEN',
      authorizationToken: `Bearer ${access_token}`,
      methodArn: 'arn:aws:execute-api:eu-west-1:000000000000:api/bench/GET/v1/payments/credit-transfers',
    };
  },
  reconciler: async () => {
    await lostTransfer();
    return {};
  },
  createWebhookEndpoint: async () => createEndpointEvent(),
  listWebhookEndpoints: async () => httpEvent('GET', WEBHOOK_ENDPOINTS),
  getWebhookEndpoint: () => endpointEvent('GET'),
  deleteWebhookEndpoint: () => endpointEvent('DELETE'),
  rotateWebhookSecret: () => endpointEvent('POST', '/secret-rotation'),
  listWebhookDeliveries: () => endpointEvent('GET', '/deliveries'),
  redeliverWebhookEvents: () => endpointEvent('POST', '/redeliveries', { since: new Date(0).toISOString() }),
  listEvents: async () => httpEvent('GET', '/v1/events'),
};

export interface BenchFunction {
  name: string;
  entry: string;
  event: (() => Promise<unknown>) | undefined;
  /** Variables of its own, beside the common ones. */
  env?: Record<string, string>;
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
    event: () => stateFor(name as keyof typeof WORKFLOW_FUNCTIONS),
  })),
  {
    name: 'reconciler',
    entry: RECONCILER_ENTRY,
    event: FIRST_EVENTS.reconciler,
    env: { TABLE_NAME: RECONCILER_TABLE },
  },
  { name: 'ingestStatusEvents', entry: 'lambdas/webhooks/ingest-status-events.ts', event: statusEventBatch },
];

/** Functions not measured, by name, with why. */
export const NOT_MEASURED: Readonly<Record<string, string>> = {
  deliverDueWebhooks:
    'started by its schedule or a wake-up, with no request waiting: a cold start delays a retry only, and its attempts are the work ingestStatusEvents does',
  submitCreditTransferBatch:
    'it invokes the batch lifecycle starter through the Lambda API, for which the bench has no stand-in yet',
  getCreditTransferBatch: 'it reads a batch, which only submitCreditTransferBatch stores',
  getCreditTransferBatchNotification: 'it reads a batch, which only submitCreditTransferBatch stores',
};

/** The functions measured: every function with a first event, none of NOT_MEASURED. */
export const measuredFunctions = (only?: readonly string[]): BenchFunction[] =>
  benchFunctions().filter((fn) => NOT_MEASURED[fn.name] === undefined && (only?.includes(fn.name) ?? true));

/** The token signing key the stand-in for KMS holds: RSA_2048, signing RS256, as a stage's key made before ES256 (a new stage's is ECC_NIST_P256). */
const SIGNING_KEY_ID = 'bench-signing-key';
// Made at the first call, not when the bench's other sections import this module.
let key: KeyObject | undefined;
const signingKey = (): KeyObject => {
  key ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  return key;
};

/** KMS as the token functions call it: the public key, and a signature of a SHA-256 digest. */
const kms: Answer = (response, request) => {
  if (request.target === 'TrentService.GetPublicKey') {
    ok({
      KeyId: SIGNING_KEY_ID,
      KeySpec: 'RSA_2048',
      KeyUsage: 'SIGN_VERIFY',
      SigningAlgorithms: ['RSASSA_PKCS1_V1_5_SHA_256'],
      PublicKey: createPublicKey(signingKey()).export({ format: 'der', type: 'spki' }).toString('base64'),
    })(response, request);
    return;
  }
  if (request.target !== 'TrentService.Sign') {
    awsError('UnsupportedOperationException', `The bench's KMS does not answer ${request.target}`)(
      response,
      request,
    );
    return;
  }
  const digest = Buffer.from(String(request.body.Message), 'base64');
  const signature = kmsRsaSignatureOfDigest(signingKey(), digest);
  ok({ KeyId: SIGNING_KEY_ID, Signature: signature.toString('base64') })(response, request);
};

/** Step Functions, EventBridge and KMS as the functions call them: every start and every event accepted. */
const standInServices: Answer = (response, request) => {
  if (request.target.startsWith('TrentService.')) return kms(response, request);
  const body =
    request.target === 'AWSEvents.PutEvents'
      ? { FailedEntryCount: 0, Entries: [{ EventId: randomBytes(8).toString('hex') }] }
      : {
          executionArn: 'arn:aws:states:eu-west-1:000000000000:execution:bench:x',
          startDate: Date.now() / 1000,
        };
  ok(body)(response, request);
};

/**
 * Builds like the CDK does, into its own directory with its static assets beside it. When CPU
 * profiles are asked for, a source map is written beside the bundle (not referenced from it, so
 * the code Node loads is the same) to tell which module a profiled function comes from.
 */
export const bundle = async (
  name: string,
  entry: string,
): Promise<{ file: string; bytes: number; inputs: string[] }> => {
  const dir = join(OUT_DIR, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'index.mjs');
  const { metafile } = await build({
    ...BUNDLE_OPTIONS,
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    external: [...BUNDLE_OPTIONS.external],
    banner: { js: BUNDLE_OPTIONS.banner },
    entryPoints: [join(PROJECT_ROOT, entry)],
    bundle: true,
    outfile: file,
    logLevel: 'error',
    metafile: true,
    ...(PROFILE_ROOT !== undefined && { sourcemap: 'external' as const }),
  });
  for (const asset of routeAssets(entry))
    copyFileSync(join(PROJECT_ROOT, asset.source), join(dir, asset.file));
  return { file, bytes: statSync(file).size, inputs: Object.keys(metafile.inputs) };
};

/** In a fresh process: milliseconds from before the import to the end of the first invocation. */
const PROBE = `${LAMBDA_INVOKE}
const started = performance.now();
const { handler } = await import(process.env.BENCH_BUNDLE);
const context = { ...${JSON.stringify(CONTEXT)}, getRemainingTimeInMillis: () => 10000 };
let outcome;
try {
  const result = await invokeAsLambda(handler, JSON.parse(process.env.BENCH_EVENT), context);
  outcome = result?.statusCode ?? result?.policyDocument?.Statement?.[0]?.Effect ?? result?.status
    ?? (result?.found === undefined ? 'ok' : \`found \${result.found}, started \${result.started}\`);
} catch (error) {
  outcome = \`\${error?.name}: \${error?.message}\`.slice(0, 60);
}
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ ms: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000, outcome }));
`;

/**
 * `ms` inside the process (import + first invocation); `wallMs` from spawn to the answer, Node's
 * start included; `cpuMs` the CPU time of the process (all its threads) from its start to the answer.
 */
const loadAndInvoke = (file: string, event: unknown, env: Record<string, string>, profileDir?: string) =>
  new Promise<{ ms: number; wallMs: number; cpuMs: number; outcome: string }>((resolve, reject) => {
    const spawned = performance.now();
    const profile = profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir];
    const child = spawn(process.execPath, [...profile, '--input-type=module', '-e', PROBE], {
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

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/**
 * A loopback TCP port that forwards every connection to a Unix socket (the bench's own table),
 * telling `onCall` the DynamoDB operation of every request that passes (read from its headers).
 */
const forwardToSocket = async (
  socket: string,
  onCall: (call: string) => void,
): Promise<{ endpoint: string; close: () => void }> => {
  const server = createServer((connection) => {
    connection.on('data', (chunk: Buffer) => {
      for (const match of chunk.toString('latin1').matchAll(/x-amz-target: *DynamoDB_\d+\.(\w+)/gi))
        onCall(`DynamoDB.${match[1]}`);
    });
    const upstream = connect(socket);
    connection.pipe(upstream).pipe(connection);
    const end = () => {
      connection.destroy();
      upstream.destroy();
    };
    connection.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, close: () => server.close() };
};

const TARGET_RATIO = 1.3;

/** The stand-ins a measured process runs against, and the environment that points it at them. */
export interface BenchEnvironment {
  /** As on Lambda: credentials in the environment, AWS found through the SDK's own endpoint variables. */
  readonly env: Record<string, string>;
  /** What a function run as on Lambda with active tracing has besides (BENCH_BUNDLE_TRACING=1), else nothing. */
  readonly tracingEnv: Record<string, string>;
  readonly tracing: boolean;
  /** The AWS calls made since the last time it was asked, in order (the processes run one at a time). */
  readonly takeCalls: () => Calls;
  /** X-Ray segment documents sent to the daemon address so far. */
  readonly segmentsSent: () => number;
  /** Every event's `requestContext.authorizer.tenant` from now on (a fresh one keeps a tenant's data small). */
  readonly useTenant: (tenant: string) => void;
  readonly close: () => Promise<void>;
}

/** Starts with an empty output folder: the bundles, the table and the signing key of this run only. */
export const freshBenchFolder = (): void => {
  rmSync(OUT_DIR, { recursive: true, force: true });
  mkdirSync(OUT_DIR, { recursive: true });
};

/**
 * dynalite behind a loopback port that counts its calls, a stand-in for Step Functions and
 * EventBridge, an X-Ray daemon address, the bench client registered and the reference item put;
 * this process's environment set the same, so that it prepares each event from source against
 * the same table.
 */
export const startBenchEnvironment = async (): Promise<BenchEnvironment> => {
  const dynalite = await startDynalite({
    socket: join(OUT_DIR, 'dynamodb.sock'),
    path: join(OUT_DIR, 'dynamodb'),
  });
  // The functions reach DynamoDB over TCP as on Lambda, through their endpoint variable.
  let calls: Calls = [];
  const tableTcp = await forwardToSocket(dynalite.socket, (call) => calls.push(call));
  const stub = await startAwsJsonStub((response, request) => {
    calls.push(
      request.target
        .replace(/^AWSStepFunctions\./, 'SFN.')
        .replace(/^AWSEvents\./, 'EventBridge.')
        .replace(/^TrentService\./, 'KMS.'),
    );
    return standInServices(response, request);
  });
  // Where traced functions send their segments, as to the X-Ray daemon beside a Lambda function.
  const xrayDaemon = createSocket('udp4');
  let segmentsSent = 0;
  xrayDaemon.on('message', () => segmentsSent++);
  await new Promise<void>((resolve) => xrayDaemon.bind(0, '127.0.0.1', resolve));
  const close = async () => {
    dynalite.child.kill('SIGTERM');
    tableTcp.close();
    await stub.close();
    xrayDaemon.close();
  };
  try {
    const tableName = 'bench-bundles';
    await ensureTable(createDynamoDbClient({ socket: dynalite.socket }), tableName);
    await ensureTable(createDynamoDbClient({ socket: dynalite.socket }), RECONCILER_TABLE);
    const env: Record<string, string> = {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      AWS_ENDPOINT_URL_DYNAMODB: tableTcp.endpoint,
      AWS_ENDPOINT_URL_SFN: stub.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: stub.endpoint,
      AWS_ENDPOINT_URL_KMS: stub.endpoint,
      TABLE_NAME: tableName,
      ISSUER: 'http://127.0.0.1',
      PUBLIC_URL: 'http://127.0.0.1',
      AUDIENCE: 'credit-transfers',
      // Tokens signed and their keys published by KMS, as on AWS (the schedule read from the table).
      SIGNING_KEY_IDS: SIGNING_KEY_ID,
      LIST_CURSOR_SECRET: randomBytes(32).toString('base64url'),
      // The local runtime's key for sealing webhook signing secrets, as `npm start` gives it.
      LOCAL_WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url'),
      STATE_MACHINE_ARN: 'arn:aws:states:eu-west-1:000000000000:stateMachine:bench',
      EVENT_BUS_NAME: 'bench',
      RAIL: 'sandbox',
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      WEBHOOK_ALLOW_LOCAL_RECEIVERS: 'true',
    };
    for (const name of ['DYNAMODB_ENDPOINT', 'DYNAMODB_SOCKET']) delete process.env[name];
    Object.assign(process.env, env);
    // Imported once the environment is set: the logger reads its level when it is made.
    const { registerClient } = await import('#domain/access/register-client');
    const { SCOPES } = await import('#domain/access/scopes');
    const { DynamoDbClientStore } = await import('#adapters/access/client-store');
    const { documentClient } = await import('#adapters/aws/dynamodb-client');
    await registerClient(new DynamoDbClientStore(documentClient(), tableName), {
      clientId: CLIENT_ID,
      secret: CLIENT_SECRET,
      scopes: [...SCOPES],
      tenant: TENANT,
    });
    await documentClient().put({ TableName: tableName, Item: { pk: 'bench', sk: 'reference' } });
    /**
     * BENCH_BUNDLE_TRACING=1: the functions (not the reference) run as on Lambda with active
     * tracing, so the Tracer and the X-Ray SDK load and every AWS call is a subsegment sent to
     * the daemon address. By default they run as locally, where tracing is off and neither loads.
     */
    const tracing = process.env.BENCH_BUNDLE_TRACING === '1';
    return {
      env,
      tracing,
      tracingEnv: tracing
        ? {
            AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
            LAMBDA_TASK_ROOT: OUT_DIR,
            _X_AMZN_TRACE_ID: 'Root=1-6745f1a0-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1',
            AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${xrayDaemon.address().port}`,
          }
        : {},
      takeCalls: () => {
        const made = calls;
        calls = [];
        return made;
      },
      segmentsSent: () => segmentsSent,
      useTenant: (tenant) => {
        caller.tenant = tenant;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
};

export const benchBundles = async (options: { runs: number }): Promise<string[]> => {
  freshBenchFolder();
  writeFileSync(REFERENCE_ENTRY, REFERENCE_HANDLER);
  writeFileSync(SECRET_CHECK_ENTRY, SECRET_CHECK_HANDLER);
  const secretCheck = await bundle('secret-check', 'node_modules/.cache/bench-bundles/secret-check.ts');
  const reference = await bundle(
    'reference-handler',
    'node_modules/.cache/bench-bundles/reference-handler.ts',
  );
  writeFileSync(LIBRARIES_ENTRY, LIBRARIES_HANDLER);
  const libraries = await bundle(
    'libraries-handler',
    'node_modules/.cache/bench-bundles/libraries-handler.ts',
  );

  const bench = await startBenchEnvironment();
  const { env, tracingEnv, tracing } = bench;
  const lines: string[] = [];
  try {
    const { hashClientSecret } = await import('#domain/access/client-secret');
    const secretCheckEvent = { secret: CLIENT_SECRET, hash: await hashClientSecret(CLIENT_SECRET) };
    const secretCheckMs: number[] = [];
    const tokenRatiosWithoutCheck: number[] = [];
    const tokenFloorRatiosWithoutCheck: number[] = [];
    lines.push(
      `\n## Function bundles (esbuild options of lib/constructs/bundling.ts; ${options.runs} fresh processes each, alternating with the reference and the floor; ${tracing ? 'functions and floors traced as on Lambda with active tracing' : 'tracing off, as locally'})`,
      'reference: one DynamoDB GetItem with the same bundled AWS SDK and credential provider (the old bound, kept for comparison);',
      "floor: the function's own floor, a handler making the same AWS calls as its first invocation (reads for writes) through the same libraries, used as the function uses them: those of Powertools logger, metrics and tracer, middy, zod and the document client its bundle holds;",
      'load+1st: import and first invocation inside the process (median); process: spawn to answer, Node start included, for the function, the reference and the floor (medians);',
      'ratio / floor x: the medians of the pairwise ratios of process times, each run against the reference run and the floor run just before it (the target: floor x at most 1.3);',
      "cpu: the ratio of the processes' CPU time (user + system, all threads) to the floor's: less moved by other work on the machine, and blind to waits on the table",
      `${'function'.padEnd(32)} ${'minified'.padStart(10)}  ${'load+1st'.padStart(9)}  ${'process'.padStart(9)} / ${'ref'.padStart(7)} / ${'floor'.padStart(7)}  ${'ratio'.padStart(5)}  ${'floor x'.padStart(7)}  ${'cpu'.padStart(5)}  first answer`,
      `${'(reference: one GetItem)'.padEnd(32)} ${`${fixed(reference.bytes / 1024, 1)} KB`.padStart(10)}`,
    );
    const misses: string[] = [];
    const floorMisses: string[] = [];
    const callLines: string[] = [];
    // BENCH_BUNDLE_ONLY=issueToken,reconciler measures those alone; BENCH_BUNDLE_PROFILE=<dir>
    // writes a V8 CPU profile of each measured process there (a folder per function, its floor's
    // and the reference's too) and prints where the time goes, by module, beside the floor's.
    const only = process.env.BENCH_BUNDLE_ONLY?.split(',');
    const profileOf = (name: string) => (PROFILE_ROOT === undefined ? undefined : join(PROFILE_ROOT, name));
    // Each function's folder holds this run's profiles only.
    const clearProfiles = (name: string) => {
      const dir = profileOf(name);
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    };
    clearProfiles('reference');
    const printProfile = (name: string, file: string) => {
      const dir = profileOf(name);
      if (dir === undefined) return;
      const { processes, rows } = profileSummary(dir, file);
      console.log(`CPU self time of ${name} by module (ms per process, ${processes} processes):`);
      for (const [module, ms] of rows) console.log(`  ${fixed(ms, 1).padStart(6)}  ${module}`);
    };
    for (const fn of measuredFunctions(only)) {
      if (fn.event === undefined) throw new Error(`scripts/bench/bundles.ts: no first event for ${fn.name}`);
      const built = await bundle(fn.name, fn.entry);
      const floorName = `floor-${fn.name}`;
      clearProfiles(fn.name);
      clearProfiles(floorName);
      // A first run, not counted, tells the calls its first invocation makes.
      const firstEvent = await fn.event();
      bench.takeCalls();
      await loadAndInvoke(built.file, firstEvent, { ...env, ...tracingEnv, ...fn.env });
      const ownCalls = bench.takeCalls();
      const floorLibraries = librariesOf(built.inputs);
      callLines.push(
        `${fn.name}: ${describeCalls(ownCalls)}; floor libraries: ${[...floorLibraries].join(', ') || 'none'}`,
      );
      // A streamed route's floor streams its (empty) answer too, as Lambda invokes it.
      const streamed = ROUTES.some((route) => route.entry === fn.entry && route.streamed);
      writeFileSync(join(OUT_DIR, `${floorName}.ts`), floorHandler(ownCalls, floorLibraries, streamed));
      const floor = await bundle(floorName, `node_modules/.cache/bench-bundles/${floorName}.ts`);
      const floorRatios: number[] = [];
      const floorWall: number[] = [];
      const referenceWall: number[] = [];
      const inProcessMs: number[] = [];
      const wall: number[] = [];
      const wallRatios: number[] = [];
      const cpuRatios: number[] = [];
      let outcome = '';
      for (let run = 0; run < options.runs; run++) {
        const event = await fn.event();
        const baseline = await loadAndInvoke(reference.file, {}, env, profileOf('reference'));
        const ownFloor = await loadAndInvoke(
          floor.file,
          {},
          { ...env, ...tracingEnv, ...fn.env },
          profileOf(floorName),
        );
        if (String(ownFloor.outcome) !== '200')
          throw new Error(`the floor handler answered ${ownFloor.outcome}`);
        const measured = await loadAndInvoke(
          built.file,
          event,
          { ...env, ...tracingEnv, ...fn.env },
          profileOf(fn.name),
        );
        if (String(baseline.outcome) !== '200')
          throw new Error(`the reference handler answered ${baseline.outcome}`);
        referenceWall.push(baseline.wallMs);
        floorWall.push(ownFloor.wallMs);
        inProcessMs.push(measured.ms);
        wall.push(measured.wallMs);
        wallRatios.push(measured.wallMs / baseline.wallMs);
        floorRatios.push(measured.wallMs / ownFloor.wallMs);
        cpuRatios.push(measured.cpuMs / ownFloor.cpuMs);
        outcome = String(measured.outcome);
        if (fn.name === 'issueToken') {
          const check = await loadAndInvoke(secretCheck.file, secretCheckEvent, env);
          if (String(check.outcome) !== 'true') throw new Error(`the secret check answered ${check.outcome}`);
          secretCheckMs.push(check.ms);
          tokenRatiosWithoutCheck.push((measured.wallMs - check.ms) / baseline.wallMs);
          tokenFloorRatiosWithoutCheck.push((measured.wallMs - check.ms) / ownFloor.wallMs);
        }
      }
      printProfile(fn.name, built.file);
      printProfile(floorName, floor.file);
      const ratio = median(wallRatios);
      const floorRatio = median(floorRatios);
      if (ratio > TARGET_RATIO) misses.push(`${fn.name} ${fixed(ratio, 2)}`);
      if (floorRatio > TARGET_RATIO) floorMisses.push(`${fn.name} ${fixed(floorRatio, 2)}`);
      lines.push(
        `${fn.name.padEnd(32)} ${`${fixed(built.bytes / 1024, 1)} KB`.padStart(10)}  ${`${fixed(median(inProcessMs), 0)} ms`.padStart(9)}  ${`${fixed(median(wall), 0)} ms`.padStart(9)} / ${`${fixed(median(referenceWall), 0)} ms`.padStart(7)} / ${`${fixed(median(floorWall), 0)} ms`.padStart(7)}  ${fixed(ratio, 2).padStart(5)}  ${fixed(floorRatio, 2).padStart(7)}  ${fixed(median(cpuRatios), 2).padStart(5)}  ${outcome}`,
      );
    }
    printProfile('reference', reference.file);
    const librariesRatios: number[] = [];
    const librariesCpuRatios: number[] = [];
    for (let run = 0; run < options.runs; run++) {
      const baseline = await loadAndInvoke(reference.file, {}, env);
      const measured = await loadAndInvoke(libraries.file, {}, env);
      if (String(measured.outcome) !== '200')
        throw new Error(`the libraries handler answered ${measured.outcome}`);
      librariesRatios.push(measured.wallMs / baseline.wallMs);
      librariesCpuRatios.push(measured.cpuMs / baseline.cpuMs);
    }
    lines.push(
      `the design's libraries alone (Powertools logger and metrics, middy, zod, the document client) around the reference's GetItem, none of the service's code: ${fixed(libraries.bytes / 1024, 1)} KB, ratio to the reference ${fixed(median(librariesRatios), 2)}, cpu ${fixed(median(librariesCpuRatios), 2)}`,
    );
    const [, N, r, p] = secretCheckEvent.hash.split('$');
    const scryptParameters = `N=${N} r=${r} p=${p}`;
    if (secretCheckMs.length > 0)
      lines.push(
        `issueToken's client-secret check alone (two scrypt derivations, ${scryptParameters}, in parallel; a fresh process, import included): ${fixed(median(secretCheckMs), 0)} ms; issueToken less it: ratio ${fixed(median(tokenRatiosWithoutCheck), 2)}, floor x ${fixed(median(tokenFloorRatiosWithoutCheck), 2)}`,
      );
    if (tracing)
      lines.push(
        `X-Ray segment documents the functions and floors sent to the daemon address: ${bench.segmentsSent()}`,
      );
    lines.push(
      `old bound, ratio <= ${TARGET_RATIO} against the one-GetItem reference: ${misses.length === 0 ? 'every function meets it' : `missed by ${misses.join(', ')}`}`,
      `target, floor x <= ${TARGET_RATIO} against its own floor: ${floorMisses.length === 0 ? `every function at most ${TARGET_RATIO}` : `above ${TARGET_RATIO}: ${floorMisses.join(', ')}`}`,
      'AWS calls of each first invocation, and the libraries its floor uses:',
      ...callLines.map((line) => `  ${line}`),
      'Not measured:',
      ...Object.entries(NOT_MEASURED).map(([name, why]) => `  ${name}: ${why}`),
    );
  } finally {
    await bench.close();
  }
  return lines;
};

// `npx tsx scripts/bench/bundles.ts` runs this section alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const line of await benchBundles({
    runs: benchCount('BENCH_BUNDLE_RUNS', process.env.BENCH_BUNDLE_RUNS, 9),
  }))
    console.log(line);
}
