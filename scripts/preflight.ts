import { Command } from 'commander';
import { wholeNumber } from '#shared/config';
import { PRODUCTION_RESERVED_CONCURRENCY, reservedConcurrencyTotal } from '../lib/operations-config.ts';
import { PRODUCTION_STAGE } from '../lib/stage-config.ts';
import { formatResult, preflight } from './preflight-checks.ts';

/**
 * `npm run preflight -- --stage prod --region eu-west-1 [--backup-region r] [--account id]
 * [--key-admin-role-arn arn] [--profile p]`: checks, with read-only calls, what the stage's first
 * deployment needs of the account (scripts/preflight-checks.ts), one line per check; exits 1 if
 * any fails. The same values as the deploy's context.
 */
const program = new Command('preflight')
  .option('--stage <stage>', 'the stage to deploy', 'dev')
  .option('--region <region>', "the stage's region (default: AWS_REGION)")
  .option('--backup-region <region>', 'the -c backupRegion of the deploy, if any')
  .option('--account <id>', 'the -c account of the deploy: the credentials must be of it')
  .option('--key-admin-role-arn <arn>', 'the -c keyAdminRoleArn of the deploy')
  .option(
    '--signing-key-ids <ids>',
    "a stage deployed before: its SigningKeyIds output (comma-separated), to check the deploy keeps its keys' spec",
  )
  .option('--signing-key-generation <n>', 'the -c signingKeyGeneration of the deploy', '1')
  .option(
    '--signing-key-es256-from-generation <n>',
    'the -c signingKeyEs256FromGeneration of the deploy, if any',
  )
  .option('--profile <profile>', 'a profile of the AWS config files (default: the usual credentials)')
  .parse();
const opts = program.opts<{
  stage: string;
  region?: string;
  backupRegion?: string;
  account?: string;
  keyAdminRoleArn?: string;
  signingKeyIds?: string;
  signingKeyGeneration: string;
  signingKeyEs256FromGeneration?: string;
  profile?: string;
}>();
const generationOption = (flag: string, text: string): number => {
  try {
    return wholeNumber(flag, text, { min: 1, max: 9999 });
  } catch (error) {
    return program.error(`preflight: ${(error as Error).message}`);
  }
};
const region = opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
if (region === undefined) program.error('preflight: name the region (--region or AWS_REGION)');

// prod reserves concurrency by default; other stages only with reservedConcurrency* context values.
const reservedConcurrency =
  opts.stage === PRODUCTION_STAGE ? reservedConcurrencyTotal(PRODUCTION_RESERVED_CONCURRENCY) : 0;
const results = await preflight({
  stage: opts.stage,
  region: region as string,
  reservedConcurrency,
  ...(opts.backupRegion !== undefined && { backupRegion: opts.backupRegion }),
  ...(opts.account !== undefined && { account: opts.account }),
  ...(opts.keyAdminRoleArn !== undefined && { keyAdminRoleArn: opts.keyAdminRoleArn }),
  ...(opts.profile !== undefined && { profile: opts.profile }),
  ...(opts.signingKeyIds !== undefined && {
    signingKeys: {
      ids: opts.signingKeyIds.split(',').filter((id) => id !== ''),
      generation: generationOption('--signing-key-generation', opts.signingKeyGeneration),
      ...(opts.signingKeyEs256FromGeneration !== undefined && {
        es256FromGeneration: generationOption(
          '--signing-key-es256-from-generation',
          opts.signingKeyEs256FromGeneration,
        ),
      }),
    },
  }),
});
for (const result of results) console.log(formatResult(result));
const failed = results.filter((result) => !result.ok).length;
console.log(
  failed === 0
    ? 'All prerequisites in place.'
    : `${failed} prerequisite(s) missing: fix them before the first deploy.`,
);
process.exitCode = failed === 0 ? 0 : 1;
