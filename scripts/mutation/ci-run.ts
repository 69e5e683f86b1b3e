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
  console.log(`Mutation testing (CI): module ${module}: ${scoreLine(report.files)}, ${seconds} s`);
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const mutant of mutants.filter(
      (candidate) => candidate.status === 'Survived' || candidate.status === 'NoCoverage',
    )) {
      console.log(
        `  ${mutant.status} ${file}:${mutant.location.start.line} ${mutant.mutatorName}: ${mutant.replacement ?? ''}`,
      );
    }
  }
}
