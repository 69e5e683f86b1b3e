import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The folder a local build was written to, set by that build (scripts/local/local-build.ts). */
declare const LOCAL_BUILD_FOLDER: string | undefined;

const PROJECT_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** Where a build puts the module of a source file: its path under the build folder, `.mjs` for `.ts`. */
export const builtModulePath = (buildFolder: string, source: string): string =>
  join(buildFolder, source.replace(/\.ts$/, '.mjs'));

/**
 * The module of a handler, by its source file relative to the project root (as the stack names
 * it): that file, or its built module when the local runtime runs from a build, so a handler and
 * the runtime share one copy of every module.
 */
export const handlerModuleUrl = (entry: string): string =>
  pathToFileURL(
    typeof LOCAL_BUILD_FOLDER === 'string'
      ? builtModulePath(LOCAL_BUILD_FOLDER, entry)
      : join(PROJECT_ROOT, entry),
  ).href;
