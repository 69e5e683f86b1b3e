// The CLI runs from built JavaScript (client/dist), built again when a source is newer than it.
// Plain JavaScript, so that checking costs no TypeScript loader: a few stat calls.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLIENT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = join(CLIENT, 'src');
const CONFIG = join(CLIENT, 'tsconfig.build.json');
export const BUILT_CLI = join(CLIENT, 'dist', 'cli.js');

const modifiedAt = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

const newestSource = () => {
  let newest = Math.max(modifiedAt(CONFIG), modifiedAt(join(CLIENT, 'package.json')));
  for (const entry of readdirSync(SOURCES, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts'))
      newest = Math.max(newest, modifiedAt(join(entry.parentPath, entry.name)));
  }
  return newest;
};

/** True when client/dist/cli.js is missing or older than a source of the client. */
export const isStale = () => modifiedAt(BUILT_CLI) < newestSource();

/** Builds client/dist (tsc, as `npm run client:build` does) when stale; true when it built. */
export const ensureBuilt = () => {
  if (!isStale()) return false;
  process.stderr.write('Building the CLI (client/dist): its sources changed since the last build\n');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', CONFIG], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`Building client/dist failed (tsc exit ${result.status})`);
  return true;
};
