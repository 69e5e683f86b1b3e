import { open, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { LockedError } from './errors.ts';

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

/** A lock not refreshed for this long is stale: its holder is gone, and the lock is taken over. */
export const LOCK_STALE_MS = 10_000;

export interface HeldLock {
  release(): Promise<void>;
  /** Throws LockedError when the lock was lost (not refreshed in time, taken over by another run). */
  assertHeld(): void;
}

/**
 * Takes the lock of `path` (a directory `<path>.lock`, made by proper-lockfile). The holder
 * refreshes its time every LOCK_STALE_MS / 5 while it runs; a holder that is gone (killed, a
 * zombie, a frozen host) stops refreshing it, and once LOCK_STALE_MS has passed the lock is taken
 * over. So a run started right after a kill waits up to LOCK_STALE_MS for the lock, and only a
 * live holder makes it refuse.
 */
export const acquireLock = async (path: string, staleMs = LOCK_STALE_MS): Promise<HeldLock> => {
  const lockPath = `${path}.lock`;
  let lost: Error | undefined;
  try {
    // Loaded here, not at the CLI's start: only `poll` takes a lock.
    const { default: lockfile } = await import('proper-lockfile');
    const release = await lockfile.lock(path, {
      lockfilePath: lockPath,
      // The state file need not exist yet.
      realpath: false,
      stale: staleMs,
      update: staleMs / 5,
      // Long enough for a dead holder's lock to go stale.
      retries: { retries: Math.ceil(staleMs / 500) + 2, factor: 1, minTimeout: 500, maxTimeout: 500 },
      onCompromised: (error) => {
        lost = error;
      },
    });
    return {
      release: async () => {
        if (lost === undefined) await release().catch(() => undefined);
      },
      assertHeld: () => {
        if (lost !== undefined)
          throw new LockedError(`The lock ${lockPath} was lost (${lost.message}); this run stops here`);
      },
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    throw new LockedError(
      `Another run holds the lock ${lockPath} and is alive (it kept the lock fresh for ${Math.round(staleMs / 1000)} s); ` +
        'try again when it has finished',
    );
  }
};
