import { Command, InvalidArgumentError } from 'commander';
import { runConformance } from './connector/conformance.ts';

/**
 * `npm run connector:check -- --url URL --secret KEY --account ID [--refused-account ID]`: the
 * connector conformance kit, run by a bank against its connector's test system. One line per
 * check; exit code 1 when any fails.
 */
const wholeNumber = (value: string): number => {
  if (!/^\d{1,3}$/.test(value) || Number(value) < 2) throw new InvalidArgumentError('a whole number from 2');
  return Number(value);
};

const program = new Command('connector:check')
  .description("Checks a bank's connector against the connector contract (docs/connector-openapi.json)")
  .requiredOption('--url <url>', "the connector's base URL (its test system)")
  .requiredOption('--secret <key>', 'the shared HMAC key')
  .requiredOption('--account <debtorAccountId>', 'a debtor account the test system accepts')
  .option('--refused-account <debtorAccountId>', 'a debtor account its customer-profile check refuses')
  .option('--concurrency <n>', 'submissions of one payment sent at once', wholeNumber, 5)
  .action(async (options) => {
    const results = await runConformance({
      url: options.url,
      secret: options.secret,
      debtorAccountId: options.account,
      refusedDebtorAccountId: options.refusedAccount,
      concurrency: options.concurrency,
    });
    for (const result of results)
      console.log(
        `${result.passed ? 'PASS' : 'FAIL'}  ${result.name}${result.passed ? '' : `: ${result.detail}`}`,
      );
    const failed = results.filter((result) => !result.passed).length;
    console.log(`${results.length - failed} passed, ${failed} failed`);
    if (failed > 0) process.exitCode = 1;
  });

await program.parseAsync();
