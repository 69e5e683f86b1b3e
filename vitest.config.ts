import { defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/slowest-first.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration suites each start their own local runtime; two cores run two at a time.
    maxWorkers: 2,
    reporters: ['default'],
    // Each CDK stage synthesized once per run, shared by the files that assert on it.
    globalSetup: ['test/infra/synth-cache-setup.ts'],
    sequence: { sequencer: SlowestFirst },
  },
});
