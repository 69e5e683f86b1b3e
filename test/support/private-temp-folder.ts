import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Global setup: the run's temporary files (services' data folders, tsx's compiler cache) in a
 * folder of its own that only this user can open, removed at the end. A service started by a
 * test may then keep the compiler cache, which `npm start` never keeps in a shared /tmp.
 */
export default function setup(): () => void {
  const folder = mkdtempSync(join(tmpdir(), 'credit-transfers-test-run-'));
  process.env.TMPDIR = folder;
  return () => rmSync(folder, { recursive: true, force: true });
}
