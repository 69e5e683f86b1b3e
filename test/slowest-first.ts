import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, first, so the run does not end on one long file while the other
 * core idles. Vitest orders by the durations of the last run when it has them; a fresh clone (CI)
 * has none, so the files known to be slow come first, then the folders whose files start a local
 * runtime or synthesize stages, then the unit tests.
 */
const SLOWEST = [
  // Each synthesizes four stages, two of them shared (test/infra/synth.ts).
  'test/infra/go-live.test.ts',
  'test/infra/stages.test.ts',
  'test/integration/webhooks.test.ts',
  'test/infra/signing-key.test.ts',
  'test/infra/aws-sdk-settings.test.ts',
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
