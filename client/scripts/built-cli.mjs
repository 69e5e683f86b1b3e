// The CLI runs from built JavaScript (client/dist), built again when a source is newer than it.
// Plain JavaScript, so that checking costs no TypeScript loader: a few stat calls.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CLIENT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = join(CLIENT, 'src');
const CONFIG = join(CLIENT, 'tsconfig.build.json');
const DIST = join(CLIENT, 'dist');
export const BUILT_CLI = join(DIST, 'cli.js');

const modifiedAt = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

/** The newest source, folders included: a source removed or renamed changes its folder's time. */
const newestSource = () => {
  let newest = Math.max(modifiedAt(CONFIG), modifiedAt(join(CLIENT, 'package.json')), modifiedAt(SOURCES));
  for (const entry of readdirSync(SOURCES, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory() || entry.name.endsWith('.ts'))
      newest = Math.max(newest, modifiedAt(join(entry.parentPath, entry.name)));
  }
  return newest;
};

/** True when client/dist/cli.js is missing or older than a source of the client. */
export const isStale = () => modifiedAt(BUILT_CLI) < newestSource();

/**
 * Builds client/dist afresh with tsc (no file of a removed source stays), into a folder of its
 * own first and then swapped in by renames: a CLI process starting meanwhile reads the old build
 * or the new one, never a half-written file.
 */
export const build = () => {
  const fresh = `${DIST}.build-${process.pid}`;
  const old = `${DIST}.old-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', CONFIG, '--outDir', fresh], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) {
    rmSync(fresh, { recursive: true, force: true });
    throw new Error(`Building client/dist failed (tsc exit ${result.status})`);
  }
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(fresh, DIST);
  rmSync(old, { recursive: true, force: true });
};

/** Builds client/dist when stale; true when it built. */
export const ensureBuilt = () => {
  if (!isStale()) return false;
  process.stderr.write(
    `Building the CLI (client/dist): ${existsSync(BUILT_CLI) ? 'its sources changed since the last build' : 'not built yet'}\n`,
  );
  build();
  return true;
};

// `node scripts/built-cli.mjs`: the package's build (npm run build, prepack), only when stale.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (!ensureBuilt()) process.stderr.write('client/dist is up to date with its sources\n');
}
