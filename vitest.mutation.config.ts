import { defineConfig } from 'vitest/config';

/**
 * The unit tests only, as Stryker runs them for each mutant (`npm run mutation`): the integration
 * suite starts services from the project's files, outside Stryker's sandbox, so it could never
 * see a mutant and would only cost time. Stryker picks, per mutant, the tests that import the
 * mutated file (vitest's `related`) and, of those, the ones that ran its code (`perTest`).
 */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'threads',
    reporters: ['default'],
    // What the unit tests need of the suite's setup: a private temporary folder, and the stack's
    // IAM policies (the local IAM check's tests read them).
    globalSetup: ['test/support/private-temp-folder.ts', 'test/support/iam-stack.ts'],
  },
});
