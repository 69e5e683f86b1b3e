import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A file served to browsers as it is, never part of a function's JavaScript bundle. On AWS it is
 * copied beside the bundle when the function is built (lib/constructs/function-defaults.ts);
 * locally it is read from the installed package.
 */
export interface StaticAsset {
  /** Its name beside the function's bundle. */
  readonly file: string;
  /** Where it is in the project, relative to the project root. */
  readonly source: string;
  readonly contentType: string;
}

/** The project root seen from this file (lambdas/shared/), for the local runtime. */
const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Reads the asset once, at start: beside this module's file (the bundle on AWS), else from the
 * project. A missing file throws, so a function without its asset fails at its cold start, loudly.
 */
export const readStaticAsset = (asset: StaticAsset): Buffer => {
  const beside = join(dirname(fileURLToPath(import.meta.url)), asset.file);
  return readFileSync(existsSync(beside) ? beside : join(PROJECT_ROOT, asset.source));
};

/** Scalar's standalone browser bundle: the reference page's renderer, served from this origin. */
export const REFERENCE_RENDERER: StaticAsset = {
  file: 'scalar.js',
  source: 'node_modules/@scalar/api-reference/dist/browser/standalone.js',
  contentType: 'text/javascript; charset=utf-8',
};
