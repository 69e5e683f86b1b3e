import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkLocalSigningKey, ensureLocalSigningKey } from '#adapters/access/signer-local';
import { readTenantRateLimits } from '#adapters/access/tenant-rate-limit-file';
import { ensureLocalCursorSecret } from '#adapters/commons/cursor-key';
import { setAsideTornTail } from '#adapters/credit-transfers/event-publisher-local';

/**
 * The local data folder: what it holds, and its checks at start. A file that exists but cannot be
 * used stops the start with a DataFolderError saying which file and what to do: it is never
 * replaced, since a new secret would void everything made with the old one.
 */
export const dataFolderFiles = (dataDir: string) => ({
  signingKey: join(dataDir, 'signing-key.pem'),
  /** The key before the last rotation: verifies tokens until `npm run keys -- retire` removes it. */
  previousSigningKey: join(dataDir, 'signing-key.previous.pem'),
  cursorSecret: join(dataDir, 'list-cursor-secret'),
  /** The local stand-in for the KMS key the webhook signing secrets are sealed under. */
  webhookSecretKey: join(dataDir, 'webhook-secret-key'),
  events: join(dataDir, 'events.jsonl'),
  executions: join(dataDir, 'executions.jsonl'),
  table: join(dataDir, 'dynamodb'),
  /** The table's Unix socket: the only way to it, inside this owner-only folder. */
  tableSocket: join(dataDir, 'dynamodb.sock'),
  /** Per-tenant limits set with `npm run clients -- set-limit`, read by the gateway. */
  tenantRateLimits: join(dataDir, 'tenant-rate-limits.json'),
});

/** Permission bits of anyone but the owner. */
const GROUP_AND_OTHERS = 0o077;

/**
 * Makes the data folder if absent (0700), and takes from the folder and everything in it any
 * permission of anyone but its owner (folders end 0700, files 0600); answers a line saying what
 * it changed, if anything.
 */
export const tightenDataFolder = (dataDir: string): string | undefined => {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tightened: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    const mode = stat.mode & 0o777;
    // A symbolic link has no permissions of its own; what it points to is not the folder's.
    if (!stat.isSymbolicLink() && (mode & GROUP_AND_OTHERS) !== 0) {
      chmodSync(path, mode & ~GROUP_AND_OTHERS);
      tightened.push(`${relative(dataDir, path) || '.'} (was ${mode.toString(8)})`);
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dataDir);
  if (tightened.length === 0) return undefined;
  const shown = tightened.slice(0, 5).join(', ');
  const more = tightened.length > 5 ? ` and ${tightened.length - 5} more` : '';
  return `${dataDir}: readable by others, now the owner's only (folders 0700, files 0600): ${shown}${more}`;
};

/** A damaged file in the data folder: its message is one line an operator can act on. */
export class DataFolderError extends Error {
  override name = 'DataFolderError';
}

const damaged = (path: string, problem: string, afresh: string): DataFolderError =>
  new DataFolderError(
    `${path} is damaged (${problem}): restore it from a backup, or remove it to start afresh (${afresh}).`,
  );

const problemOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The token signing key: created when absent, checked when present. */
export const checkSigningKey = (path: string): void => {
  try {
    ensureLocalSigningKey(path);
  } catch (error) {
    throw damaged(
      path,
      problemOf(error),
      'a new key is made, and every access token issued before stops working',
    );
  }
};

/** The previous signing key, when there is one: checked, never made. */
export const checkPreviousSigningKey = (path: string): void => {
  if (!existsSync(path)) return;
  try {
    checkLocalSigningKey(path);
  } catch (error) {
    throw damaged(
      path,
      problemOf(error),
      'the tokens signed before the last key rotation stop working; those signed since keep working',
    );
  }
};

/** The list cursor secret: created when absent, checked when present; answers its value. */
export const checkCursorSecret = (path: string): string => {
  try {
    return ensureLocalCursorSecret(path);
  } catch (error) {
    throw damaged(
      path,
      problemOf(error),
      'a new secret is made, and every list cursor handed out before is refused',
    );
  }
};

/** The table's files could not be opened or read. */
export const damagedTable = (path: string, error: unknown): DataFolderError =>
  damaged(
    path,
    problemOf(error).split('\n')[0] ?? 'unreadable',
    'every client, payment and idempotency key stored locally is lost',
  );

/**
 * The table holds items of the key layout before each kind of item had a prefix of its own: this
 * version would read them as absent (payments not found, endpoints gone), so it refuses to start.
 */
export const oldKeyLayout = (path: string, items: number): DataFolderError =>
  new DataFolderError(
    `${path} holds ${items} items of the old key layout (partition keys under TENANT#), which this version cannot read: finish or export them with the version that stored them, or remove ${path} to start afresh (every client, payment and webhook endpoint stored locally is lost).`,
  );

/** The key webhook signing secrets are sealed under: created when absent, checked when present; answers its value. */
export const checkWebhookSecretKey = (path: string): string => {
  try {
    // The same form as the cursor secret: 32 random bytes, base64url.
    return ensureLocalCursorSecret(path);
  } catch (error) {
    throw damaged(
      path,
      problemOf(error),
      'a new key is made, and every webhook endpoint registered before signs nothing until its secret is rotated',
    );
  }
};

/** The per-tenant limits `npm run clients -- set-limit` keeps: checked when present, never made. */
export const checkTenantRateLimits = (path: string): void => {
  try {
    readTenantRateLimits(path);
  } catch (error) {
    throw damaged(
      path,
      problemOf(error),
      "every tenant's own limit is dropped for TENANT_RATE_LIMIT's numbers",
    );
  }
};

/** The secrets, created when absent (the previous key never is) and checked when present; answers the cursor secret and the webhook secret key. */
export const checkSecrets = (dataDir: string): { cursorSecret: string; webhookSecretKey: string } => {
  const files = dataFolderFiles(dataDir);
  checkSigningKey(files.signingKey);
  checkPreviousSigningKey(files.previousSigningKey);
  return {
    cursorSecret: checkCursorSecret(files.cursorSecret),
    webhookSecretKey: checkWebhookSecretKey(files.webhookSecretKey),
  };
};

/** Sets aside a torn last event line (see setAsideTornTail); answers a line to log, if any. */
export const checkEventLog = (path: string): string | undefined => {
  const moved = setAsideTornTail(path);
  return moved === 0
    ? undefined
    : `${path}: its last line was torn by a crash; its ${moved} bytes were moved to ${path}.torn`;
};
