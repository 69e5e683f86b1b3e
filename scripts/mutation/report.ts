import { existsSync, globSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { modules } from './modules.ts';

/**
 * The project's mutation results: one report in Stryker's own format (mutation-testing-report-
 * schema), kept as Stryker's incremental file, to which each module's run adds its files; and a
 * summary of it, per module and per file, with every surviving mutant.
 */
export const REPORT_DIR = 'reports/mutation';
export const INCREMENTAL_FILE = `${REPORT_DIR}/stryker-incremental.json`;
export const SUMMARY_FILE = `${REPORT_DIR}/summary.md`;

export type MutantStatus =
  | 'Killed'
  | 'Survived'
  | 'NoCoverage'
  | 'Timeout'
  | 'CompileError'
  | 'RuntimeError'
  | 'Ignored'
  | 'Pending';

export interface Mutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: MutantStatus;
  /** A module-level mutant: not measured here (ignoreStatic, docs/decisions.md). */
  static?: boolean;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}

export interface MutationReport {
  schemaVersion: string;
  thresholds: { high: number; low: number };
  files: Record<string, { language: string; source: string; mutants: Mutant[] }>;
  testFiles?: Record<string, unknown>;
  [other: string]: unknown;
}

export const readReport = (path: string): MutationReport | undefined =>
  existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as MutationReport) : undefined;

export const writeReport = (path: string, report: MutationReport): void => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report)}\n`);
};

/** The files a module's globs name now (a `!` glob takes files out). */
export const filesOf = (globs: readonly string[]): string[] => {
  const exclude = globs.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1));
  const include = globs.filter((glob) => !glob.startsWith('!'));
  return [...new Set(include.flatMap((glob) => globSync(glob, { exclude })))].sort();
};

/** The module a file belongs to (the first whose globs name it), or `other`. */
export const moduleOf = (file: string): string =>
  Object.entries(modules).find(([, globs]) => filesOf(globs).includes(file))?.[0] ?? 'other';

/**
 * The project report with a run's files in place of what it had for them: `ranFiles` are the
 * files the run was asked to mutate in whole (one with no mutant left is dropped), and files
 * that no longer exist are dropped too.
 */
export const mergeRun = (
  project: MutationReport | undefined,
  run: MutationReport,
  ranFiles: readonly string[],
  mutated: readonly string[] = ranFiles,
): MutationReport => {
  const files = { ...(project?.files ?? {}) };
  for (const file of ranFiles) delete files[file];
  // Only the files this run mutated: Stryker carries the other files' earlier results in its
  // report too, rewritten (without their static marks), which must not replace ours.
  for (const [file, entry] of Object.entries(run.files)) if (mutated.includes(file)) files[file] = entry;
  for (const file of Object.keys(files)) if (!existsSync(file)) delete files[file];
  return { ...run, files, testFiles: { ...(project?.testFiles ?? {}), ...(run.testFiles ?? {}) } };
};

interface Counts {
  static?: number;
  killed: number;
  survived: number;
  noCoverage: number;
  timeout: number;
  invalid: number;
  ignored: number;
}

/** The counts of the mutants measured; static ones apart (an earlier run may have tested them). */
const countsOf = (all: readonly Mutant[]): Counts => {
  const mutants = all.filter((mutant) => mutant.static !== true);
  return {
    static: all.length - mutants.length,
    killed: mutants.filter((mutant) => mutant.status === 'Killed').length,
    survived: mutants.filter((mutant) => mutant.status === 'Survived').length,
    noCoverage: mutants.filter((mutant) => mutant.status === 'NoCoverage').length,
    timeout: mutants.filter((mutant) => mutant.status === 'Timeout').length,
    invalid: mutants.filter((mutant) => mutant.status === 'CompileError' || mutant.status === 'RuntimeError')
      .length,
    ignored: mutants.filter((mutant) => mutant.status === 'Ignored').length,
  };
};

/** Stryker's mutation score: detected (killed or timed out) of the valid mutants, in percent. */
export const scoreOf = (counts: Counts): number | undefined => {
  const detected = counts.killed + counts.timeout;
  const valid = detected + counts.survived + counts.noCoverage;
  return valid === 0 ? undefined : (100 * detected) / valid;
};

const percent = (score: number | undefined) => (score === undefined ? 'n/a' : `${score.toFixed(1)}%`);

const row = (name: string, mutants: readonly Mutant[]) => {
  const counts = countsOf(mutants);
  return `| ${name} | ${percent(scoreOf(counts))} | ${counts.killed} | ${counts.timeout} | ${counts.survived} | ${counts.noCoverage} | ${counts.invalid} | ${counts.static} |`;
};

const oneLine = (text: string | undefined) =>
  (text ?? '').replace(/\s+/g, ' ').replace(/\|/g, '\\|').slice(0, 100);

/** The per-module and per-file tables, as the summary and docs/benchmarks.md show them. */
export const scoreTables = (report: MutationReport): string[] => {
  const byModule = new Map<string, string[]>();
  for (const file of Object.keys(report.files).sort()) {
    const module = moduleOf(file);
    byModule.set(module, [...(byModule.get(module) ?? []), file]);
  }
  const header = [
    '| | score | killed | timeout | survived | no coverage | compile/runtime error | static (not measured) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  return [
    '#### Per module',
    '',
    ...header,
    ...[...byModule].map(([module, files]) =>
      row(
        module,
        files.flatMap((file) => report.files[file]?.mutants ?? []),
      ),
    ),
    '',
    '#### Per file',
    '',
    ...header,
    ...Object.keys(report.files)
      .sort()
      .map((file) => row(file, report.files[file]?.mutants ?? [])),
  ];
};

export const BENCHMARKS_FILE = 'docs/benchmarks.md';
const REGION_START = '<!-- mutation: start (generated, do not edit) -->';
const REGION_END = '<!-- mutation: end -->';

/** The tables in docs/benchmarks.md, between its mutation markers (added at the end if missing). */
export const writeBenchmarksRegion = (report: MutationReport): void => {
  const text = readFileSync(BENCHMARKS_FILE, 'utf8');
  const region = [REGION_START, ...scoreTables(report), REGION_END].join('\n');
  const from = text.indexOf(REGION_START);
  const to = text.indexOf(REGION_END);
  writeFileSync(
    BENCHMARKS_FILE,
    from >= 0 && to > from
      ? `${text.slice(0, from)}${region}${text.slice(to + REGION_END.length)}`
      : `${text.trimEnd()}\n\n## Mutation testing (\`npm run mutation\`)\n\n${region}\n`,
  );
};

/** The summary in Markdown: per module, per file, then each survivor and mutant left uncovered. */
export const summaryOf = (report: MutationReport): string => {
  const lines = [
    '# Mutation testing: the latest result of each file',
    '',
    'Written by `npm run mutation` from reports/mutation/stryker-incremental.json (each file as of',
    'its last run; see docs/benchmarks.md, "Mutation testing"). Score: killed and timed-out mutants',
    'of all valid ones (compile errors, found by the type checker, do not count). Static mutants',
    '(module-level values) are not measured: see docs/decisions.md, "Mutation testing".',
    '',
    ...scoreTables(report),
    '',
    '## Survivors and mutants no test ran',
    '',
  ];
  for (const [file, { mutants }] of Object.entries(report.files).sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const mutant of mutants
      .filter(
        (candidate) =>
          candidate.static !== true && (candidate.status === 'Survived' || candidate.status === 'NoCoverage'),
      )
      .sort((a, b) => a.location.start.line - b.location.start.line)) {
      lines.push(
        `- ${file}:${mutant.location.start.line}:${mutant.location.start.column} ${mutant.status} ${mutant.mutatorName}: \`${oneLine(mutant.replacement)}\``,
      );
    }
  }
  return `${lines.join('\n')}\n`;
};
