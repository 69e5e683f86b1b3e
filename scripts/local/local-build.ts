import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { ROUTES } from '#routes';
import { WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { AUTHORIZER_ENTRY } from './api-gateway.ts';

const PROJECT_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The operator's scripts tests run against a local service, built beside it. */
const OPERATOR_SCRIPTS = ['scripts/clients.ts', 'scripts/keys.ts', 'scripts/client-create.ts'] as const;

/** The local runtime's start and the handlers it loads by path: one build, sharing every module. */
const SERVICE_ENTRIES = [
  'scripts/start.ts',
  AUTHORIZER_ENTRY,
  ...ROUTES.map((route) => route.entry),
  ...Object.values(WORKFLOW_FUNCTIONS).map((fn) => fn.entry),
];

/**
 * Each project file keeps its own location: a file it reads beside itself (an ASL definition, the
 * OpenAPI document, the IAM cache) is found where it is in the sources, not in the build folder.
 * And only the entry runs as the main module: a script that another one imports (`clients.ts` in
 * `client-create.ts`) stays a library in the bundle as it is in the sources.
 */
const sourceLocations = (entries: ReadonlySet<string>): Plugin => ({
  name: 'source-locations',
  setup(builder) {
    builder.onLoad({ filter: /\.(ts|mjs)$/ }, async ({ path }) => {
      if (path.includes('/node_modules/')) return undefined;
      const text = await readFile(path, 'utf8');
      const located = text
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)));
      return {
        contents: entries.has(path) ? located : located.replaceAll('import.meta.main', 'false'),
        loader: path.endsWith('.ts') ? 'ts' : 'js',
      };
    });
  },
});

const buildEntries = async (folder: string, entries: readonly string[], shared: boolean): Promise<void> => {
  await build({
    absWorkingDir: PROJECT_ROOT,
    entryPoints: [...entries],
    outbase: '.',
    outdir: folder,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: shared,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    packages: 'external',
    // Class and function names stay as written: errors and logs name them.
    keepNames: true,
    define: { LOCAL_BUILD_FOLDER: JSON.stringify(folder) },
    plugins: [sourceLocations(new Set(entries.map((entry) => join(PROJECT_ROOT, entry))))],
    logLevel: 'warning',
  });
};

/**
 * The local runtime as ES modules in `folder` (inside the project, so packages resolve from its
 * node_modules): the start and its handlers in one build that shares each project module, and each
 * operator script in a bundle of its own; packages are left to Node. A process started from it
 * loads a few modules instead of hundreds of TypeScript files through a loader: what a test run,
 * which starts the runtime a hundred times, pays for.
 */
export const buildLocalRuntime = async (folder: string): Promise<void> => {
  await Promise.all([
    buildEntries(folder, [...new Set(SERVICE_ENTRIES)], true),
    ...OPERATOR_SCRIPTS.map((script) => buildEntries(folder, [script], false)),
  ]);
};
