import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The IAM policies the local runtime enforces, synthesized once if lib/ changed.
    globalSetup: ['test/support/iam-stack.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration suites each start their own local runtime; two cores run two at a time.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
