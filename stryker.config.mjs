/**
 * Mutation testing (`npm run mutation`, scripts/mutation/run.ts): the modules that guard money and
 * access (scripts/mutation/modules.ts), each mutant tested by the unit tests that import its file
 * and ran its code.
 */
import { modules } from './scripts/mutation/modules.ts';

/** Where a run writes: the wrapper gives each module's run its own folder and incremental file. */
const reportDir = process.env.MUTATION_REPORT_DIR ?? 'reports/mutation/last-run';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // Every module's files (a module's `!` globs only keep its files apart from another's).
  mutate: Object.values(modules)
    .flat()
    .filter((glob) => !glob.startsWith('!')),
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.mutation.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  // A static mutant (a module-level value) is not activated by the vitest runner here (Stryker
  // 10.1.1, Vitest 4.1): every one survived, even where removing the value by hand fails tests.
  // Ignored, it is reported as such rather than as a false survivor (docs/decisions.md).
  ignoreStatic: true,
  incremental: true,
  incrementalFile: process.env.MUTATION_INCREMENTAL_FILE ?? 'reports/mutation/stryker-incremental.json',
  // Two cores shared by the whole machine: one test runner, one checker.
  concurrency: 1,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `${reportDir}/mutation.html` },
  jsonReporter: { fileName: `${reportDir}/mutation.json` },
  clearTextReporter: { allowEmojis: false, logTests: false, reportScoreTable: true },
  // Survivors are reported, never fail the command: some are equivalent (docs/decisions.md).
  thresholds: { high: 90, low: 80, break: null },
  // A loaded machine: a mutant's tests may take well over their dry run's time before it is a timeout.
  timeoutMS: 20_000,
  tempDirName: '.stryker-tmp',
  ignorePatterns: [
    '/reports',
    'cdk.out',
    '.local-data',
    '.bench-data',
    'client/dist',
    'coverage',
    'test-results',
    '*.tgz',
  ],
  cleanTempDir: true,
};
