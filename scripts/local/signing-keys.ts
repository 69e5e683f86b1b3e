import { createPrivateKey } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { checkLocalSigningKey, localKeyAlgorithm, newSigningKeyPem } from '#adapters/access/signer-local';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '#domain/access/issue-access-token';
import { signingJwk, type TokenSigningAlgorithm } from '#domain/access/token-signer';
import { DataFolderError, dataFolderFiles } from './data-folder.ts';

/**
 * The local signing keys: `signing-key.pem` signs, `signing-key.previous.pem` (after a rotation)
 * still verifies. A running service looks at the files every second; a started one reads them.
 */

/**
 * How long after a rotation the previous key may still verify a live token: the token lifetime,
 * plus the second a running service may still sign with it, with a margin.
 */
export const LOCAL_RETIRE_AFTER_SECONDS = ACCESS_TOKEN_LIFETIME_SECONDS + 60;

export class SigningKeyCommandError extends Error {
  override name = 'SigningKeyCommandError';
}

export interface LocalKeyStatus {
  current: { path: string; kid: string; algorithm: TokenSigningAlgorithm; since: Date };
  previous?: { path: string; kid: string; algorithm: TokenSigningAlgorithm; retiresAt: Date };
}

const keyOf = (path: string): { kid: string; algorithm: TokenSigningAlgorithm } => {
  const pem = readFileSync(path, 'utf8');
  return { kid: signingJwk(createPrivateKey(pem)).kid, algorithm: localKeyAlgorithm(pem) };
};

const exists = (path: string): boolean => {
  try {
    statSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
};

const checked = (path: string): void => {
  try {
    checkLocalSigningKey(path);
  } catch (error) {
    throw new DataFolderError(
      `${path} is damaged (${error instanceof Error ? error.message : String(error)}): restore it from a backup before changing keys`,
    );
  }
};

export const localKeyStatus = (dataDir: string): LocalKeyStatus => {
  const files = dataFolderFiles(dataDir);
  if (!exists(files.signingKey)) {
    throw new SigningKeyCommandError(`${files.signingKey} does not exist yet: npm start makes it`);
  }
  checked(files.signingKey);
  // The current key file is written by the rotation that made it current: its time is the rotation's.
  const since = statSync(files.signingKey).mtime;
  const status: LocalKeyStatus = { current: { path: files.signingKey, ...keyOf(files.signingKey), since } };
  if (exists(files.previousSigningKey)) {
    checked(files.previousSigningKey);
    status.previous = {
      path: files.previousSigningKey,
      ...keyOf(files.previousSigningKey),
      retiresAt: new Date(since.getTime() + LOCAL_RETIRE_AFTER_SECONDS * 1000),
    };
  }
  return status;
};

const writeDurably = (path: string, content: string): void => {
  const descriptor = openSync(path, 'wx', 0o600);
  try {
    writeSync(descriptor, content);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
};

/**
 * A new key signs from now on (in a running service within a second), the one before is kept as
 * the previous key until retired. The new key signs with `algorithm` (default: the current key's),
 * so a rotation is also how a data folder moves from RS256 to ES256. Refused while a previous key may still verify live tokens.
 * Each step leaves a usable folder: the old key is linked as the previous one before the new key
 * replaces it in one rename.
 */
export const rotateLocalSigningKey = (
  dataDir: string,
  now: Date = new Date(),
  algorithm?: TokenSigningAlgorithm,
): { status: LocalKeyStatus; retired?: string } => {
  const files = dataFolderFiles(dataDir);
  const before = localKeyStatus(dataDir);
  let retired: string | undefined;
  if (before.previous !== undefined) {
    // The same key twice: a rotation stopped between its two steps; nothing to keep.
    const interrupted = before.previous.kid === before.current.kid;
    if (!interrupted && before.previous.retiresAt > now) {
      throw new SigningKeyCommandError(
        `the previous key ${before.previous.kid} may verify live tokens until ${before.previous.retiresAt.toISOString()}; rotate after that (npm run keys -- retire, then rotate)`,
      );
    }
    unlinkSync(files.previousSigningKey);
    if (!interrupted) retired = before.previous.kid;
  }
  const next = `${files.signingKey}.next`;
  if (exists(next)) unlinkSync(next);
  writeDurably(next, newSigningKeyPem(algorithm ?? before.current.algorithm));
  linkSync(files.signingKey, files.previousSigningKey);
  renameSync(next, files.signingKey);
  return { status: localKeyStatus(dataDir), ...(retired !== undefined && { retired }) };
};

/**
 * Removes the previous key: every token it signed is refused from then on. Refused before its
 * tokens can have expired, unless `immediately` (a key thought compromised).
 */
export const retireLocalSigningKey = (
  dataDir: string,
  options: { immediately: boolean },
  now: Date = new Date(),
): string | undefined => {
  const { previous } = localKeyStatus(dataDir);
  if (previous === undefined) return undefined;
  if (previous.retiresAt > now && !options.immediately) {
    throw new SigningKeyCommandError(
      `the previous key ${previous.kid} may verify live tokens until ${previous.retiresAt.toISOString()}; retire it after that, or with --now to refuse its tokens at once`,
    );
  }
  unlinkSync(previous.path);
  return previous.kid;
};
