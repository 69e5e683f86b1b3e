import { open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `content` so that a reader (or a run after a crash) sees the old file or the
 * new one, never a mix: write a temporary file beside it, fsync it, rename it over, fsync the folder.
 */
export const writeFileAtomically = async (path: string, content: string): Promise<void> => {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.writeFile(content);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
};

export class LockedError extends Error {
  override name = 'LockedError';
}

interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes `path` as a lock file (created exclusively, naming this process). A lock left by a process
 * of this host that no longer runs (killed) is stale and taken over; any other lock refuses.
 */
export const acquireLock = async (path: string): Promise<() => Promise<void>> => {
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  for (let tries = 0; tries < 3; tries++) {
    try {
      const file = await open(path, 'wx', 0o600);
      await file.writeFile(JSON.stringify(owner));
      await file.close();
      return async () => {
        await unlink(path).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) continue; // released meanwhile: try again
    let holder: Partial<LockOwner> = {};
    try {
      holder = JSON.parse(text) as LockOwner;
    } catch {
      // Empty: its owner is writing it right now (or died doing so); not taken over.
    }
    const stale =
      holder.hostname === owner.hostname && typeof holder.pid === 'number' && !isAlive(holder.pid);
    if (!stale) {
      throw new LockedError(
        `Another run holds the lock ${path} (pid ${holder.pid ?? '?'} on ${holder.hostname ?? '?'} since ${holder.startedAt ?? '?'}); ` +
          'if no run is active, delete that file',
      );
    }
    // Move the stale lock aside (rename is atomic: only one run takes it), then try again.
    const aside = `${path}.stale.${process.pid}`;
    await rename(path, aside).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
  }
  throw new LockedError(`Could not take the lock ${path}`);
};
