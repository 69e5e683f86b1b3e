import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CLIENT } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * The SDK as an integrator gets it: `npm pack` of client/ (its build runs on prepack), the
 * tarball installed into a new project, a program using every public call type-checked there
 * with TypeScript strict, then run against the local service.
 */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noImplicitOverride: true,
    // The package's own declarations are checked too.
    skipLibCheck: false,
    outDir: 'out',
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
  },
  include: ['program.ts'],
};

/** Every public call, with the types an integrator would write down. */
const PROGRAM = `
import {
  ApiError,
  type CreditTransfer,
  type CreditTransferAnswer,
  type CreditTransferRequest,
  CreditTransfersClient,
  CreditTransfersError,
  type ErrorCode,
  FINAL_STATUSES,
  isFinal,
  type ListFilters,
  type ListPage,
  LockedError,
  NetworkError,
  type NotModifiedResult,
  PAYMENT_STATUSES,
  parseDuration,
  type PaymentStatus,
  pollOnce,
  StateFileError,
  type StatusChange,
  type StatusReport,
  type StatusResult,
  type TokenResponse,
  WaitTimeoutError,
  type CreatedWebhookEndpoint,
  type EventPage,
  type RotatedWebhookSecret,
  verifyWebhook,
  type WebhookDeliveryAttempt,
  type WebhookEndpoint,
  type WebhookEndpointPage,
  type WebhookEvent,
  type WebhookRedeliveryResult,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from '@credit-transfers/client';

const baseUrl = process.env.BASE_URL ?? '';
const client = new CreditTransfersClient({
  baseUrl,
  clientId: process.env.CLIENT_ID ?? '',
  clientSecret: process.env.CLIENT_SECRET ?? '',
  retry: { attempts: 2, baseDelayMs: 10, attemptTimeoutMs: 10_000 },
});

const token: string = await client.tokens.accessToken();
const tokenResponse: TokenResponse = await client.tokens.tokenResponse();

const transfer: CreditTransferRequest = {
  paymentMethod: 'CreditTransfer',
  amount: '12.50',
  currency: 'EUR',
  debtorAccountId: 'pack-acc-1',
};
const key = crypto.randomUUID();
const accepted: CreditTransferAnswer = await client.initiate(transfer, { idempotencyId: key });
const replay: CreditTransferAnswer = await client.initiate(transfer, { idempotencyId: key });

const seen: PaymentStatus[] = [];
for await (const change of client.watchStatus(accepted.paymentId, { timeoutMs: 60_000, initialIntervalMs: 100 }))
  seen.push(change.status);
const final: StatusReport = await client.waitForFinalStatus(accepted.paymentId, { timeoutMs: 60_000 });

// Settled, so the report no longer changes.
// Without ifNoneMatch the report is always there: no undefined to rule out.
const current: StatusResult = await client.status(accepted.paymentId);
const report: StatusReport = current.report;
const conditional: StatusResult | NotModifiedResult = await client.status(accepted.paymentId, {
  ifNoneMatch: current.etag ?? '"none"',
});
// @ts-expect-error with ifNoneMatch the report may be missing (304)
const maybe: StatusReport = conditional.report;
void maybe;

const held: CreditTransferAnswer = await client.initiate({ ...transfer, debtorAccountId: 'pack-acc-2-hold' });
const cancelled: CreditTransferAnswer = await client.cancel(held.paymentId, { cancellationReason: 'Ordered twice' });
const cancelledFinal = await client.waitForFinalStatus(held.paymentId, { timeoutMs: 60_000 });

const filters: ListFilters = { 'status.eq': 'AcceptedSettlementCompleted', 'debtorAccountId.eq': 'pack-acc-1' };
const page: ListPage = await client.listPage(filters, { limit: 1 });
const pages: number[] = [];
for await (const each of client.pages({ 'debtorAccountId.eq': 'pack-acc-1' }, { limit: 1 })) pages.push(each.items.length);
const listed: CreditTransfer[] = [];
for await (const item of client.list({ 'status.eq': 'Cancelled' })) listed.push(item);

let refused: { code: ErrorCode; call: string; requestId: string | undefined } | undefined;
try {
  await client.initiate({ ...transfer, amount: 'ten' });
} catch (error) {
  if (error instanceof ApiError) refused = { code: error.error, call: error.call, requestId: error.requestId };
}
let unreachable = '';
try {
  await new CreditTransfersClient({
    baseUrl: 'http://127.0.0.1:1',
    clientId: 'x',
    clientSecret: 'y',
    retry: { attempts: 1 },
  }).listPage();
} catch (error) {
  if (error instanceof NetworkError) unreachable = error.call;
}
let timedOut: PaymentStatus | undefined;
const slow = await client.initiate({ ...transfer, debtorAccountId: 'pack-acc-3-hold' });
try {
  await client.waitForFinalStatus(slow.paymentId, { timeoutMs: 300 });
} catch (error) {
  if (error instanceof WaitTimeoutError) timedOut = error.lastStatus;
}
await client.cancel(slow.paymentId);

const changes: StatusChange[] = [];
const stateDir = process.env.STATE_DIR ?? '.';
const poll = await pollOnce({
  client,
  statePath: \`\${stateDir}/poll-state.json\`,
  owner: { apiUrl: baseUrl, clientId: process.env.CLIENT_ID ?? '' },
  report: (change) => changes.push(change),
});

// Webhooks: an endpoint on a local port nobody listens on (the local runtime allows 127.0.0.1).
const endpoint: CreatedWebhookEndpoint = await client.webhooks.create({
  url: 'http://127.0.0.1:9/hooks',
  description: 'pack',
  eventTypes: ['credit-transfer.status-changed'],
});
const endpointPage: WebhookEndpointPage = await client.webhooks.listPage({ limit: 1 });
const endpoints: WebhookEndpoint[] = [];
for await (const each of client.webhooks.list()) endpoints.push(each);
const shown: WebhookEndpoint = await client.webhooks.get(endpoint.id);
const rotated: RotatedWebhookSecret = await client.webhooks.rotateSecret(endpoint.id);
const attempts: WebhookDeliveryAttempt[] = await client.webhooks.deliveries(endpoint.id, { limit: 5 });
const redelivered: WebhookRedeliveryResult = await client.webhooks.redeliver(endpoint.id, {
  since: new Date(Date.now() - 60_000).toISOString(),
});
await client.webhooks.delete(endpoint.id);

const eventPage: EventPage = await client.events.listPage({ type: 'credit-transfer.status-changed' }, { limit: 2 });
const events: WebhookEvent[] = [];
for await (const event of client.events.list({ 'paymentId.eq': accepted.paymentId })) events.push(event);
let followed: string | undefined;
for await (const event of client.events.follow(
  { 'createdAt.gte': new Date(0).toISOString() },
  { intervalMs: 500, signal: AbortSignal.timeout(60_000) },
)) {
  // Narrowed by type: data is the status change's.
  if (event.type === 'credit-transfer.status-changed') followed = event.data.status;
  break;
}
let verification: WebhookVerificationFailure | undefined;
try {
  verifyWebhook('{}', { 'webhook-id': 'x' }, [endpoint.secret, rotated.secret]);
} catch (error) {
  if (error instanceof WebhookVerificationError) verification = error.reason;
}

const errorClasses = [ApiError, NetworkError, WaitTimeoutError, LockedError, StateFileError, WebhookVerificationError].every(
  (type) => type.prototype instanceof CreditTransfersError,
);

console.log(
  JSON.stringify({
    token: token.split('.').length,
    tokenType: tokenResponse.token_type,
    paymentId: accepted.paymentId,
    replayed: [accepted.replayed, replay.replayed],
    samePayment: replay.paymentId === accepted.paymentId,
    requestIds: [accepted.requestId, replay.requestId, current.requestId].every((id) => typeof id === 'string'),
    bodyOnly: Object.keys(JSON.parse(JSON.stringify(accepted))).includes('requestId'),
    reportId: report.paymentId,
    notModified: conditional.modified === false,
    seen,
    final: final.status,
    isFinal: isFinal(final.status) && FINAL_STATUSES.includes(final.status),
    statuses: PAYMENT_STATUSES.length,
    cancelled: [cancelled.paymentId === held.paymentId, cancelledFinal.status],
    page: [page.items.length, page.total, page.cursor],
    pages,
    listedCancelled: listed.map((item) => item.paymentId).includes(held.paymentId),
    refused,
    unreachable,
    timedOut,
    poll: { changes: poll.changes, reported: changes.length, stuck: poll.stuck.length, errors: poll.errors },
    duration: parseDuration('15m'),
    errorClasses,
    webhooks: {
      secret: endpoint.secret.startsWith('whsec_'),
      paged: endpointPage.items.length,
      listed: endpoints.some((each) => each.id === endpoint.id),
      shown: shown.status,
      rotated: rotated.secret !== endpoint.secret,
      attempts: attempts.length >= 0,
      redelivered: redelivered.queued >= 0,
    },
    events: { page: eventPage.items.length <= 2, listed: events.length >= 0, followed },
    verification,
  }),
);
`;

/** A mistake an integrator makes: the compiler names the type instead of spelling out its fields. */
const MISTAKE = `
import { CreditTransfersClient } from '@credit-transfers/client';
const client = new CreditTransfersClient({ baseUrl: 'http://x', clientId: 'a', clientSecret: 'b' });
await client.initiate({ paymentMethod: 'CreditTransfer', amount: '12.50' });
`;

const service = useLocalService();
let project: string;

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'client-pack-'));
  await mkdir(join(project, 'state'));
}, 120_000);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packed SDK in a new strict TypeScript project', () => {
  it('installs from its tarball, type-checks a program using every public call, and runs it', async () => {
    const packed = join(project, 'packed');
    await mkdir(packed);
    await run('npm', ['pack', '--pack-destination', packed], { cwd: join(ROOT, 'client') });
    const [tarball] = await readdir(packed);
    expect(tarball).toMatch(/\.tgz$/);
    const { stdout: listing } = await run('tar', ['tzf', join(packed, tarball ?? '')]);
    expect(listing).toContain('package/README.md');
    expect(listing).toContain('package/dist/index.d.ts');

    const app = join(project, 'app');
    await mkdir(app);
    await writeFile(
      join(app, 'package.json'),
      JSON.stringify({ name: 'app', private: true, type: 'module' }),
    );
    await writeFile(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    // Its dependencies from the npm cache, or the registry when the cache lacks one.
    await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', join(packed, tarball ?? '')],
      { cwd: app },
    );

    await writeFile(join(app, 'program.ts'), MISTAKE);
    const mistake = await run(TSC, ['-p', '.', '--noEmit'], { cwd: app }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    expect(mistake).toContain('CreditTransferRequest');
    expect(mistake).not.toMatch(/\.\.\. \d+ more \.\.\./);

    await writeFile(join(app, 'program.ts'), PROGRAM);
    const compiled = await run(TSC, ['-p', '.'], { cwd: app }).catch((error: { stdout: string }) => {
      throw new Error(`tsc refused the program:\n${error.stdout}`);
    });
    expect(compiled.stderr).toBe('');

    const { stdout } = await run(process.execPath, [join(app, 'out', 'program.js')], {
      cwd: app,
      env: {
        ...process.env,
        BASE_URL: service.baseUrl,
        CLIENT_ID: LOCAL_CLIENT.clientId,
        CLIENT_SECRET: LOCAL_CLIENT.clientSecret,
        STATE_DIR: join(project, 'state'),
      },
    });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({
      token: 3,
      tokenType: 'Bearer',
      replayed: [false, true],
      samePayment: true,
      requestIds: true,
      bodyOnly: false,
      reportId: result.paymentId,
      notModified: true,
      final: 'AcceptedSettlementCompleted',
      isFinal: true,
      statuses: 8,
      cancelled: [true, 'Cancelled'],
      page: [1, 1, ''],
      pages: [1],
      listedCancelled: true,
      refused: { code: 'invalid_request', call: 'api' },
      unreachable: 'token',
      duration: 900_000,
      errorClasses: true,
      poll: { stuck: 0, errors: [] },
      webhooks: {
        secret: true,
        paged: 1,
        listed: true,
        shown: 'enabled',
        rotated: true,
        attempts: true,
        redelivered: true,
      },
      events: { page: true, listed: true, followed: 'Received' },
      verification: 'missing_headers',
    });
    expect(result.seen.at(-1)).toBe('AcceptedSettlementCompleted');
    expect(result.refused.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.timedOut).toMatch(/^(Received|Accepted)/);
    expect(result.poll.changes).toBeGreaterThanOrEqual(3);

    const cli = await run(join(app, 'node_modules', '.bin', 'credit-transfers'), ['list', '--help'], {
      cwd: app,
    });
    expect(cli.stdout).toContain('--status <status>');
  }, 240_000);
});
