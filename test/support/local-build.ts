import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLocalRuntime } from '#local/local-build';
import { LOCAL_BUILD_VARIABLE } from '#local/service-process';

const CACHE = fileURLToPath(new URL('../../node_modules/.cache', import.meta.url));

/**
 * Global setup: the local runtime and the operator's scripts built once for the run, and every
 * service and script a test starts run from that build (service-process.ts scriptArguments): a
 * start then loads a few modules instead of compiling hundreds of files. The build is made from
 * the sources as they are now, and removed at the end. Inside node_modules, so packages resolve.
 */
export default async function setup(): Promise<() => Promise<void>> {
  await mkdir(CACHE, { recursive: true });
  const folder = await mkdtemp(join(CACHE, 'local-runtime-'));
  await buildLocalRuntime(folder);
  process.env[LOCAL_BUILD_VARIABLE] = folder;
  return () => rm(folder, { recursive: true, force: true });
}
