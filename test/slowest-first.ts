import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, first, so the run does not end on one long file while the other
 * core idles. Vitest orders by the durations of the last run when it has them; a fresh clone (CI)
 * has none, so the files known to be slow come first, then the folders whose files start a local
 * runtime or synthesize stages, then the unit tests.
 */
const SLOWEST = [
  // Measured on a clean clone, longest first. Most of them wait much of their time (a lock going
  // stale, the events' settle horizon, the guides' polling loops): started first, their waits are
  // filled with other files' work rather than left at the end of the run.
  'test/docs/documentation.test.ts',
  'test/integration/client-poll.test.ts',
  'test/integration/webhooks.test.ts',
  'test/integration/client-cli.test.ts',
  'test/browser/docs-page.test.ts',
  'test/integration/client-webhooks.test.ts',
  'test/integration/fuzz.test.ts',
  'test/integration/list-credit-transfers.test.ts',
  'test/unit/workflow/table-calls.test.ts',
  'test/integration/crash-kill-batch.test.ts',
  'test/integration/auth-throttle.test.ts',
];

const FOLDERS = [
  'test/integration/',
  'test/browser/',
  'test/docs/',
  'test/infra/',
  'test/client/',
  'test/unit/',
];

const rankOf = (spec: TestSpecification): number => {
  const file = spec.moduleId.replaceAll('\\', '/');
  const listed = SLOWEST.findIndex((name) => file.endsWith(name));
  if (listed !== -1) return listed;
  const folder = FOLDERS.findIndex((name) => file.includes(`/${name}`));
  return SLOWEST.length + (folder === -1 ? FOLDERS.length : folder);
};

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const byLastRun = await super.sort(files);
    // Array sort is stable: within a rank, the base order (last run's durations, or file size) holds.
    return byLastRun.sort((a, b) => rankOf(a) - rankOf(b));
  }
}
