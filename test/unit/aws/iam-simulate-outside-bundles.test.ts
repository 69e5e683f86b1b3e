import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '#routes';
import { BATCH_LIFECYCLES_ENTRY, RECONCILER_ENTRY, WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import { BUNDLE_OPTIONS } from '../../../lib/constructs/bundling.ts';

/**
 * @cloud-copilot/iam-simulate (AGPL-3.0) checks the local runtime's calls; it must never be part of
 * a Lambda function (docs/decisions.md). Every function's entry is bundled as the stack bundles it
 * (the same aliases and externals), and none may hold a file of the package.
 */
const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRIES = [
  ...new Set([
    ...ROUTES.map((route) => route.entry),
    'lambdas/auth/authorizer.ts',
    ...Object.values(WORKFLOW_FUNCTIONS).map((fn) => fn.entry),
    RECONCILER_ENTRY,
    BATCH_LIFECYCLES_ENTRY,
    'lambdas/webhooks/ingest-status-events.ts',
    'lambdas/webhooks/deliver-due-webhooks.ts',
  ]),
];

/** Every bundle's inputs, by entry (one esbuild run for all). */
const inputsByEntry = async (): Promise<Map<string, string[]>> => {
  const result = await build({
    entryPoints: ENTRIES.map((entry) => join(PROJECT_ROOT, entry)),
    outdir: join(PROJECT_ROOT, 'cdk.out', 'bundle-check'),
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    metafile: true,
    logLevel: 'silent',
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    alias: { ...BUNDLE_OPTIONS.alias },
    external: [...BUNDLE_OPTIONS.external],
  });
  return new Map(
    Object.values(result.metafile.outputs)
      .filter((output) => output.entryPoint !== undefined)
      .map((output) => [output.entryPoint as string, Object.keys(output.inputs)]),
  );
};

describe('the Lambda bundles', () => {
  it('hold no file of the IAM evaluator, nor the local runtime', async () => {
    const bundles = await inputsByEntry();
    expect(bundles.size).toBe(ENTRIES.length);
    for (const [entry, inputs] of bundles) {
      expect(inputs.length, entry).toBeGreaterThan(10);
      expect(
        inputs.filter((path) => path.includes('@cloud-copilot/') || path.includes('scripts/local/')),
        entry,
      ).toEqual([]);
    }
  });
});
