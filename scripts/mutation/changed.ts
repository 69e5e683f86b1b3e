import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Instrumenter } from '@stryker-mutator/instrumenter';
import { modules } from './modules.ts';
import { filesOf, REPORT_DIR, scoreOf } from './report.ts';
import { type MutationRun, runsFor } from './run.ts';

/**
 * CI's mutation step (`.ci/run`): Stryker over the lines a change touched in the modules of
 * scripts/mutation/modules.ts, compared with the merge base with main (or, on main, the previous
 * commit), and only when that fits the budget: at most MAX_FILES files and MAX_MUTANTS mutants in
 * the changed lines, else it says so and skips. A run that overruns its time is stopped and said
 * so. Survivors are printed, never fail CI (some are equivalent: docs/decisions.md). The full run
 * is `npm run mutation`.
 */
const MAX_FILES = Number(process.env.MUTATION_MAX_FILES ?? 6);
const MAX_MUTANTS = Number(process.env.MUTATION_MAX_MUTANTS ?? 40);
const MAX_SECONDS = Number(process.env.MUTATION_MAX_SECONDS ?? 180);

const git = (...args: string[]): string | undefined => {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
};

/** What the change is compared with: MUTATION_BASE, the merge base with main, or the previous commit. */
export const baseOf = (): { commit: string; name: string } | undefined => {
  const given = process.env.MUTATION_BASE;
  if (given) {
    const commit = git('rev-parse', '--verify', `${given}^{commit}`);
    return commit === undefined ? undefined : { commit, name: given };
  }
  const head = git('rev-parse', 'HEAD');
  for (const main of ['main', 'origin/main']) {
    const mergeBase = git('merge-base', 'HEAD', main);
    if (mergeBase !== undefined && mergeBase !== head)
      return { commit: mergeBase, name: `merge base with ${main}` };
  }
  const previous = git('rev-parse', '--verify', 'HEAD~1^{commit}');
  return previous === undefined ? undefined : { commit: previous, name: 'previous commit' };
};

/** The lines (1-based, inclusive) each file has new or changed since the base, working tree included. */
export const changedLines = (base: string, files: readonly string[]): Map<string, [number, number][]> => {
  const changed = new Map<string, [number, number][]>();
  if (files.length === 0) return changed;
  const diff = git('diff', '--no-color', '--no-ext-diff', '-U0', base, '--', ...files) ?? '';
  let file: string | undefined;
  for (const line of diff.split('\n')) {
    const target = /^\+\+\+ b\/(.+)$/.exec(line);
    if (target) file = target[1];
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk && file !== undefined) {
      const start = Number(hunk[1]);
      const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
      // Lines only removed leave nothing to mutate.
      if (count > 0) changed.set(file, [...(changed.get(file) ?? []), [start, start + count - 1]]);
    }
  }
  return changed;
};

const quietLogger = {
  isTraceEnabled: () => false,
  isDebugEnabled: () => false,
  isInfoEnabled: () => false,
  isWarnEnabled: () => false,
  isErrorEnabled: () => false,
  isFatalEnabled: () => false,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  fatal: () => undefined,
};

/** How many mutants Stryker makes in these lines of these files (its own instrumenter, no test run). */
export const countMutants = async (lines: Map<string, [number, number][]>): Promise<number> => {
  const files = [...lines].map(([name, ranges]) => ({
    name,
    content: readFileSync(name, 'utf8'),
    // Stryker's ranges: 0-based lines, as a `file:start-end` mutate pattern gives them.
    mutate: ranges.map(([start, end]) => ({
      start: { line: start - 1, column: 0 },
      end: { line: end - 1, column: Number.MAX_SAFE_INTEGER },
    })),
  }));
  const result = await new Instrumenter(quietLogger as never).instrument(files, {
    plugins: null,
    excludedMutations: [],
    ignorers: [],
  });
  return result.mutants.length;
};

const say = (line: string) => console.log(`Mutation testing (CI): ${line}`);

const runWithin = (
  run: MutationRun,
  seconds: number,
): Promise<{ status: number | null; timedOut: boolean }> =>
  new Promise((resolve) => {
    // Its own process, so that the time bound can end Stryker and its workers at once.
    const child = spawn('tsx', ['scripts/mutation/ci-run.ts', run.module, ...run.patterns], {
      stdio: 'inherit',
      detached: true,
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    }, seconds * 1000);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, timedOut });
    });
  });

const main = async () => {
  const base = baseOf();
  if (base === undefined) return say('skipped: no base commit to compare with');
  const moduleFiles = new Set(Object.values(modules).flatMap((globs) => filesOf(globs)));
  const touched = (git('diff', '--name-only', base.commit) ?? '')
    .split('\n')
    .filter((file) => moduleFiles.has(file) && existsSync(file));
  const lines = changedLines(base.commit, touched);
  if (lines.size === 0) return say(`skipped: no line of a mutated module changed since the ${base.name}`);
  const mutants = await countMutants(lines);
  const what = `${lines.size} file(s), ${mutants} mutant(s) in the changed lines since the ${base.name}`;
  if (lines.size > MAX_FILES || mutants > MAX_MUTANTS) {
    return say(
      `skipped: ${what}, over the budget of ${MAX_FILES} files and ${MAX_MUTANTS} mutants (run \`npm run mutation -- --mutate <file>\`)`,
    );
  }
  if (mutants === 0) return say(`skipped: ${what}`);
  say(`running over ${what}`);
  const patterns = [...lines].flatMap(([file, ranges]) =>
    ranges.map(([start, end]) => `${file}:${start}-${end}`),
  );
  const started = Date.now();
  let left = MAX_SECONDS;
  for (const run of runsFor(patterns)) {
    const { timedOut } = await runWithin(run, left);
    left -= (Date.now() - started) / 1000;
    if (timedOut || left <= 0) {
      return say(
        `stopped after ${MAX_SECONDS} s, over its time budget; results so far in ${REPORT_DIR}/ci-*`,
      );
    }
  }
  say(`done in ${Math.round((Date.now() - started) / 1000)} s`);
};

/** The score line of one finished CI run, from its report. */
export const scoreLine = (files: Record<string, { mutants: { status: string }[] }>): string => {
  const mutants = Object.values(files).flatMap((file) => file.mutants);
  const count = (status: string) => mutants.filter((mutant) => mutant.status === status).length;
  const counts = {
    killed: count('Killed'),
    timeout: count('Timeout'),
    survived: count('Survived'),
    noCoverage: count('NoCoverage'),
    invalid: count('CompileError') + count('RuntimeError'),
    ignored: count('Ignored'),
  };
  const score = scoreOf(counts);
  return `score ${score === undefined ? 'n/a' : `${score.toFixed(1)}%`} (${counts.killed} killed, ${counts.timeout} timed out, ${counts.survived} survived, ${counts.noCoverage} without a test)`;
};

if (import.meta.url === `file://${process.argv[1]}`) await main();
