import { scoreLine } from './changed.ts';
import { REPORT_DIR } from './report.ts';
import { runStryker } from './run.ts';

/**
 * One module's CI run over changed lines (scripts/mutation/changed.ts starts it in a process of its
 * own, to stop it on its time bound): its report in reports/mutation/ci-<module>, the project's
 * results left as they are (a run over some lines of a file is not the file's result).
 */
const [module = 'other', ...patterns] = process.argv.slice(2);
const { report, seconds } = runStryker(
  { module, patterns },
  { keep: false, reportDir: `${REPORT_DIR}/ci-${module}` },
);
if (report === undefined) {
  console.log(`Mutation testing (CI): module ${module}: no report (Stryker failed), ${seconds} s`);
} else {
  // Only the changed lines' mutants: the report also carries earlier results for the rest of each file.
  const ranges = patterns.map((pattern) => {
    const [, file = pattern, start = '0', end = String(Number.MAX_SAFE_INTEGER)] =
      /^(.+):(\d+)-(\d+)$/.exec(pattern) ?? [];
    return { file, start: Number(start), end: Number(end) };
  });
  const inChanges = (file: string, line: number) =>
    ranges.some((range) => range.file === file && line >= range.start && line <= range.end);
  const files = Object.fromEntries(
    Object.entries(report.files).map(([file, entry]) => [
      file,
      { ...entry, mutants: entry.mutants.filter((mutant) => inChanges(file, mutant.location.start.line)) },
    ]),
  );
  console.log(`Mutation testing (CI): module ${module}: ${scoreLine(files)}, ${seconds} s`);
  for (const [file, { mutants }] of Object.entries(files)) {
    for (const mutant of mutants.filter(
      (candidate) => candidate.status === 'Survived' || candidate.status === 'NoCoverage',
    )) {
      console.log(
        `  ${mutant.status} ${file}:${mutant.location.start.line} ${mutant.mutatorName}: ${mutant.replacement ?? ''}`,
      );
    }
  }
}
