import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { modules } from './modules.ts';
import {
  filesOf,
  INCREMENTAL_FILE,
  mergeRun,
  moduleOf,
  REPORT_DIR,
  readReport,
  SUMMARY_FILE,
  summaryOf,
  writeBenchmarksRegion,
  writeReport,
} from './report.ts';

/**
 * `npm run mutation [-- --module <name>] [-- --mutate <file>[:<lines>]]`: Stryker over the
 * modules of scripts/mutation/modules.ts (all of them by default), one Stryker run per module so
 * that each has its own report (reports/mutation/<module>/mutation.html and .json). Every run
 * starts from the project's incremental file (reports/mutation/stryker-incremental.json), so a
 * mutant whose code and tests did not change keeps its result, and adds its files to it; the
 * summary (reports/mutation/summary.md) is then written from it.
 */

/** The file part of a Stryker mutate pattern (`file.ts:10-20` names lines 10 to 20 of file.ts). */
const fileOfPattern = (pattern: string): string => pattern.replace(/:\d+(:\d+)?-\d+(:\d+)?$/, '');

export interface MutationRun {
  module: string;
  /** Stryker mutate patterns: files, or files with line ranges. */
  patterns: string[];
}

/** The runs for these patterns: one per module, patterns outside every module in `other`. */
export const runsFor = (patterns: readonly string[]): MutationRun[] => {
  const runs = new Map<string, string[]>();
  for (const pattern of patterns) {
    const isGlob = /[*?{[]/.test(pattern);
    const targets = isGlob ? filesOf([pattern]) : [pattern];
    for (const target of targets) {
      if (!existsSync(fileOfPattern(target))) throw new Error(`No such file to mutate: ${target}`);
      const module = moduleOf(fileOfPattern(target));
      runs.set(module, [...(runs.get(module) ?? []), target]);
    }
  }
  return [...runs].map(([module, modulePatterns]) => ({ module, patterns: modulePatterns }));
};

/**
 * One Stryker run, from a copy of the project's incremental file; its results are merged back
 * into the project's report unless `keep` is false (a run over line ranges, whose report holds
 * only part of its files). Returns Stryker's exit status and its report.
 */
export const runStryker = (
  run: MutationRun,
  options: { force?: boolean; keep?: boolean; reportDir?: string; extraArgs?: string[] } = {},
) => {
  const reportDir = options.reportDir ?? `${REPORT_DIR}/${run.module}`;
  rmSync(reportDir, { recursive: true, force: true });
  mkdirSync(reportDir, { recursive: true });
  const incremental = `${reportDir}/incremental.json`;
  if (existsSync(INCREMENTAL_FILE)) copyFileSync(INCREMENTAL_FILE, incremental);
  const started = Date.now();
  const stryker = spawnSync(
    'stryker',
    [
      'run',
      'stryker.config.mjs',
      '--mutate',
      run.patterns.join(','),
      '--incrementalFile',
      incremental,
      ...(options.force ? ['--force'] : []),
      ...(options.extraArgs ?? []),
    ],
    { stdio: 'inherit', env: { ...process.env, MUTATION_REPORT_DIR: reportDir } },
  );
  const seconds = Math.round((Date.now() - started) / 1000);
  const report = readReport(incremental);
  if (report !== undefined && options.keep !== false) {
    const wholeFiles = run.patterns.filter((pattern) => fileOfPattern(pattern) === pattern);
    const mutated = [...new Set(run.patterns.map(fileOfPattern))];
    writeReport(INCREMENTAL_FILE, mergeRun(readReport(INCREMENTAL_FILE), report, wholeFiles, mutated));
  }
  return { status: stryker.status ?? 1, report, seconds };
};

export const writeSummary = (): string | undefined => {
  const project = readReport(INCREMENTAL_FILE);
  if (project === undefined) return undefined;
  const summary = summaryOf(project);
  writeFileSync(SUMMARY_FILE, summary);
  writeBenchmarksRegion(project);
  return summary;
};

const main = () => {
  const program = new Command('mutation')
    .description('Mutation testing (Stryker) of the modules that guard money and access')
    .option('-m, --mutate <patterns...>', 'files (or file:lines) to mutate, comma-separated or repeated')
    .option('--module <names...>', `modules to run: ${Object.keys(modules).join(', ')}`)
    .option(
      '--test-files <globs...>',
      "only these test files (Stryker's testFiles): quicker, and a floor on the score the related tests give",
    )
    .option('--force', 'test every mutant again, ignoring earlier results')
    .option('--summary-only', 'write the summary from the results already there, run nothing')
    .parse();
  const options = program.opts<{
    mutate?: string[];
    module?: string[];
    testFiles?: string[];
    force?: boolean;
    summaryOnly?: boolean;
  }>();
  if (!options.summaryOnly) {
    const runs =
      options.mutate !== undefined
        ? runsFor(options.mutate.flatMap((value) => value.split(',')).filter((value) => value !== ''))
        : (options.module ?? Object.keys(modules)).map((module) => {
            const globs = modules[module];
            if (globs === undefined)
              throw new Error(`No module ${module}: ${Object.keys(modules).join(', ')}`);
            return { module, patterns: filesOf(globs) };
          });
    let failed = false;
    for (const run of runs) {
      console.log(`\nMutation testing, module ${run.module}: ${run.patterns.length} file(s)`);
      const { status, seconds } = runStryker(run, {
        force: options.force,
        extraArgs: options.testFiles === undefined ? [] : ['--testFiles', options.testFiles.join(',')],
      });
      console.log(
        `Module ${run.module}: Stryker ${status === 0 ? 'done' : `failed (${status})`} in ${seconds} s`,
      );
      failed ||= status !== 0;
    }
    if (failed) process.exitCode = 1;
  }
  const summary = writeSummary();
  if (summary !== undefined) console.log(`\n${summary}\nWritten to ${SUMMARY_FILE}`);
};

if (import.meta.url === `file://${process.argv[1]}`) main();
