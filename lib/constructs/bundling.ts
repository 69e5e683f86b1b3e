import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { ROUTES } from '#routes';
import type { StaticAsset } from '#shared/static-asset';

/**
 * The esbuild options of every function, in one place: the CDK functions (function-defaults.ts)
 * and the bundle benchmark (scripts/bench/bundles.ts) build with exactly these.
 */

/**
 * Nothing is left to the runtime: the AWS SDK v3 clients are bundled and tree-shaken with the
 * function (the runtime's own copy loads slower than a bundle of what the function uses).
 */
export const EXTERNAL_MODULES: readonly string[] = [];

const SHIMS = fileURLToPath(new URL('../bundle-shims/', import.meta.url));

/**
 * Module substitutions, each worth a measured part of every cold start:
 * - the SDK's default credential chain, to the two providers a Lambda function meets
 *   (environment, container); scripts people run keep the whole chain, since they are not bundled;
 * - node:http and node:https, to Node's CommonJS modules (on Node 24 the ES namespace of
 *   node:http reads its lazy WebSocket getter and loads undici); the SDK's NodeHttpHandler
 *   imports both;
 * - semver, which the X-Ray SDK needs only to patch AWS SDK v2 clients, to a stub (v3 clients
 *   are captured without it).
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    ['http', 'https'].flatMap((name) => [
      [name, join(SHIMS, `${name}.cjs`)],
      [`node:${name}`, join(SHIMS, `${name}.cjs`)],
    ]),
  ),
  semver: join(SHIMS, 'semver.cjs'),
  '@aws-sdk/credential-provider-node': join(SHIMS, 'credential-provider-node.mjs'),
};

export const BUNDLE_OPTIONS = {
  platform: 'node',
  format: 'esm',
  target: 'node24',
  mainFields: ['module', 'main'],
  minify: true,
  // No source maps: --enable-source-maps reads the map at every cold start, and the logged
  // errors (their names are written out in the code, message) locate a fault well enough.
  sourcemap: false,
  // Names are not kept: that costs 14 KB of every bundle, and error names never rely on them.
  keepNames: false,
  external: EXTERNAL_MODULES,
  alias: BUNDLE_ALIASES,
  // CommonJS dependencies inside an ES module bundle still call require().
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
} as const;

/** The static files of the route whose handler is `entry` (none for other functions). */
export const routeAssets = (entry: string): readonly StaticAsset[] =>
  ROUTES.find((route) => route.entry === entry)?.assets ?? [];

const quoted = (path: string): string => `'${path.replaceAll("'", "'\\''")}'`;

/** Copies each asset from the project into the function's asset directory, beside the bundle. */
export const staticAssetHooks = (assets: readonly StaticAsset[]): ICommandHooks => ({
  beforeBundling: () => [],
  beforeInstall: () => [],
  afterBundling: (inputDir, outputDir) =>
    assets.map(
      (asset) => `cp ${quoted(`${inputDir}/${asset.source}`)} ${quoted(`${outputDir}/${asset.file}`)}`,
    ),
});
