import { resolve } from 'node:path';

// Before any handler module builds its logger: locally only warnings and errors by default.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// Nothing is traced locally (Powertools turns tracing off outside Lambda), so the X-Ray SDK is
// kept from its automatic mode, whose async hooks cost every promise of the service a little.
process.env.AWS_XRAY_MANUAL_MODE ??= 'true';
// Every file and folder the service and its table process make is the owner's alone (0600, 0700).
process.umask(0o077);
const { checkSecrets, DataFolderError, tightenDataFolder } = await import('#local/data-folder');
const { SettingError, wholeNumberEnv } = await import('#shared/config');

/**
 * A damaged data file or an unusable setting is the operator's to fix: one line saying which and
 * how, no stack trace.
 */
const refuseToStart = (error: unknown): never => {
  const operators = error instanceof DataFolderError || error instanceof SettingError;
  console.error(operators ? `Cannot start: ${error.message}` : error);
  process.exit(1);
};

/** `npm start`: the whole service on this machine. Every setting has a default; see docs/local-runtime.md. */
const setting = (name: string, fallback: string): string => process.env[name] || fallback;

/** What may refuse the start is checked before the rest of the service is even loaded. */
const orRefuse = <T>(check: () => T): T => {
  try {
    return check();
  } catch (error) {
    return refuseToStart(error);
  }
};

const dataDir = resolve(setting('DATA_DIR', '.local-data'));
const port = orRefuse(() => wholeNumberEnv('PORT', 3000, { min: 0, max: 65_535 }));
// A damaged secret stops it at once. The folder is made owner-only before any secret is written to it.
orRefuse(() => {
  const tightened = tightenDataFolder(dataDir);
  if (tightened !== undefined) console.warn(tightened);
  checkSecrets(dataDir);
});
const { startLocalRuntime } = await import('#local/runtime');

const DEFAULT_CLIENT_SECRET = 'local-client-secret';
const client = {
  clientId: setting('LOCAL_CLIENT_ID', 'local-client'),
  clientSecret: setting('LOCAL_CLIENT_SECRET', DEFAULT_CLIENT_SECRET),
  tenant: 'local',
};
// A secret the operator chose is theirs to know: the banner shows only the well-known default.
const shownSecret = client.clientSecret === DEFAULT_CLIENT_SECRET ? client.clientSecret : undefined;

const runtime = await startLocalRuntime({
  host: setting('HOST', '127.0.0.1'),
  port,
  dataDir,
  tableName: setting('TABLE_NAME', 'credit-transfers'),
  client,
}).catch(refuseToStart);
for (const notice of runtime.notices) console.warn(notice);

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping`);
  await runtime.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
// A parent killed without passing the signal on (npm, a shell) must not leave the service running.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void shutdown('parent exited');
}, 1000).unref();

const { baseUrl } = runtime;
const secret = shownSecret ?? '<LOCAL_CLIENT_SECRET>';
console.log(`Credit transfer service listening on ${baseUrl}
  DynamoDB (dynalite):  ${runtime.tableSocket} (Unix socket, this user only)
  OpenAPI:              ${baseUrl}/openapi.json   reference: ${baseUrl}/docs
  Client:               client_id=${client.clientId} ${shownSecret === undefined ? 'client_secret as set in LOCAL_CLIENT_SECRET' : `client_secret=${shownSecret}`} tenant=${client.tenant} (all scopes)

Try it:
  TOKEN=$(curl -s ${baseUrl}/oauth/token -H 'Content-Type: application/json' \\
    -d '{"grant_type":"client_credentials","client_id":"${client.clientId}","client_secret":"${secret}","scope":"transactions:read transactions:write"}' \\
    | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')
  curl -s ${baseUrl}/v1/payments/credit-transfers -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
    -H "idempotencyId: $(node -p 'crypto.randomUUID()')" -d '{"paymentMethod":"CreditTransfer","amount":"125.50","currency":"EUR","debtorAccountId":"001-DDA-01-123456"}'
`);
