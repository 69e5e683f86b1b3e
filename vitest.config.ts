import { defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/slowest-first.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration suites each start their own local runtime. Three at a time on two cores: much of
    // a file's time is waiting (a settling transfer, a lock going stale, a sandbox's sleep), and a
    // third file fills it (docs/decisions.md, "Test suite speed, part 3").
    maxWorkers: 3,
    // Each file in a worker thread of its own rather than a child process: a tenth less CPU over
    // the run (each file's modules still load afresh). Nothing under test sets process-wide state
    // (umask, working folder, signal handlers) but the services and scripts it starts as processes.
    pool: 'threads',
    reporters: ['default'],
    // The IAM policies the local runtime enforces, synthesized once if lib/ changed; and each CDK
    // stage synthesized once per run, shared by the files that assert on it.
    // The CLI built from its sources when they changed (client/dist), as `npm run cli` runs it.
    // The local runtime built once for the run: every service a test starts runs from it.
    // The run's temporary files in a folder of its own (see private-temp-folder.ts).
    globalSetup: [
      'test/support/private-temp-folder.ts',
      'test/support/iam-stack.ts',
      'test/infra/synth-cache-setup.ts',
      'test/support/client-build.ts',
      'test/support/local-build.ts',
    ],
    sequence: { sequencer: SlowestFirst },
  },
});
