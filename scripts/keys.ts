import { resolve } from 'node:path';
import { KMSClient } from '@aws-sdk/client-kms';
import { STSClient } from '@aws-sdk/client-sts';
import { Command, Option } from 'commander';
import { kmsSigner } from '#adapters/access/signer-kms';
import { DynamoDbSigningKeyScheduleStore } from '#adapters/access/signing-key-schedule';
import { initialSchedule, SIGNING_KEY_SCHEDULE_CACHE_SECONDS } from '#adapters/access/signing-keys-kms';
import { regionalDocumentClient } from '#adapters/aws/dynamodb-client';
import { KEY_SET_MAX_AGE_SECONDS } from '#auth/key-set';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '#domain/access/issue-access-token';
import {
  effectiveSigningKeys,
  type RotationTiming,
  type SigningKeySchedule,
  SigningKeyScheduleError,
  scheduleRetirement,
  scheduleRotation,
  TOKEN_SIGNING_ALGORITHMS,
  type TokenSigningAlgorithm,
} from '#domain/access/token-signer';
import { DataFolderError } from '#local/data-folder';
import {
  localKeyStatus,
  retireLocalSigningKey,
  rotateLocalSigningKey,
  SigningKeyCommandError,
} from '#local/signing-keys';

/**
 * `npm run keys -- status|rotate|retire`: the token signing keys. Without --table it works on the
 * local data folder (DATA_DIR, default .local-data); with --table on a deployed stage, with the
 * operator's AWS credentials, through the signing key schedule in the table (docs/keys.md).
 */

/**
 * On AWS the new key is published this long before it signs (every cached key set, clients' for
 * KEY_SET_MAX_AGE_SECONDS and the functions' schedule, holds it by then), and the old key verifies
 * this long after (the longest token, signed at the last moment by a function with a stale schedule).
 */
export const AWS_ROTATION_TIMING: RotationTiming = {
  publishSeconds: KEY_SET_MAX_AGE_SECONDS + SIGNING_KEY_SCHEDULE_CACHE_SECONDS + 30,
  retireAfterSeconds: ACCESS_TOKEN_LIFETIME_SECONDS + SIGNING_KEY_SCHEDULE_CACHE_SECONDS + 30,
};

class OperatorError extends Error {}

interface StageOptions {
  table?: string;
  region?: string;
  signingKeyIds?: string;
}

const dataDir = (): string => resolve(process.env.DATA_DIR || '.local-data');

const splitKeyIds = (value: string | undefined): string[] => {
  const ids = (value ?? '').split(',').map((id) => id.trim());
  if (ids.length === 0 || ids.some((id) => id === '')) {
    throw new OperatorError(
      '--signing-key-ids is required on a stage: the stack output SigningKeyIds (its keys, oldest first)',
    );
  }
  return ids;
};

/** The stage's schedule store and KMS, with the operator's credentials (profiles, SSO) as the AWS CLI finds them. */
const stage = async (options: StageOptions & { table: string }) => {
  const sts = new STSClient(options.region ? { region: options.region } : {});
  try {
    const aws = { credentials: sts.config.credentials, region: await sts.config.region() };
    return {
      store: new DynamoDbSigningKeyScheduleStore(regionalDocumentClient(aws), options.table, true),
      kms: new KMSClient(aws),
    };
  } finally {
    sts.destroy();
  }
};

const describeSchedule = (schedule: SigningKeySchedule, now: Date): string[] => {
  const { signing, published } = effectiveSigningKeys(schedule, now);
  return schedule.keys.map((key) => {
    const role = key.keyId === signing ? 'signs' : published.includes(key.keyId) ? 'verifies' : 'retired';
    const times = [
      Date.parse(key.signsFrom) > now.getTime() ? `signs from ${key.signsFrom}` : '',
      key.retiresAt ? `retires at ${key.retiresAt}` : '',
    ].filter((text) => text !== '');
    return `  ${key.keyId.padEnd(40)} ${role}${times.length > 0 ? ` (${times.join(', ')})` : ''}`;
  });
};

const storedOrInitial = async (
  store: DynamoDbSigningKeyScheduleStore,
  heldKeyIds: readonly string[],
): Promise<SigningKeySchedule> => (await store.get()) ?? initialSchedule(heldKeyIds);

const saved = async (
  store: DynamoDbSigningKeyScheduleStore,
  before: SigningKeySchedule,
  after: SigningKeySchedule,
) => {
  if (!(await store.put(after, before.revision))) {
    throw new OperatorError(
      'the signing key schedule was changed meanwhile by someone else; run the command again',
    );
  }
};

const targetOptions = (command: Command): Command =>
  command
    .option(
      '--table <name>',
      'a deployed stage: the table (stack output TableName); default: the local data folder',
    )
    .option('--region <region>', 'with --table: the AWS region (default: from the AWS configuration)')
    .option(
      '--signing-key-ids <ids>',
      "with --table: the stack output SigningKeyIds (the stack's signing keys, oldest first)",
    );

export const keysProgram = (): Command => {
  const program = new Command('keys')
    .description('Token signing keys: status, rotate, retire (docs/keys.md)')
    .showSuggestionAfterError()
    .configureOutput({ outputError: (message, write) => write(message.replace(/^error: /, 'keys: ')) });

  targetOptions(program.command('status').description('Which key signs, and which verify until when')).action(
    async (options: StageOptions) => {
      const now = new Date();
      if (options.table === undefined) {
        const { current, previous } = localKeyStatus(dataDir());
        console.log(
          `Signs:    ${current.kid} ${current.algorithm} (${current.path}, since ${current.since.toISOString()})`,
        );
        if (previous !== undefined) {
          console.log(
            `Verifies: ${previous.kid} ${previous.algorithm} (${previous.path}; may be retired from ${previous.retiresAt.toISOString()})`,
          );
        }
        return;
      }
      const { store } = await stage({ ...options, table: options.table });
      const stored = await store.get();
      if (stored === undefined) {
        console.log('No rotation yet: the oldest key of SigningKeyIds signs alone');
        return;
      }
      for (const line of describeSchedule(stored, now)) console.log(line);
    },
  );

  targetOptions(
    program
      .command('rotate')
      .description(
        'Publish a new key and sign with it (locally at once; on a stage after the key set caches renew); the old key verifies until retired',
      )
      .addOption(
        new Option(
          '--algorithm <alg>',
          "locally: the new key's algorithm (default: the current key's); on a stage the newest KMS key's spec decides (signingKeyEs256FromGeneration)",
        ).choices(TOKEN_SIGNING_ALGORITHMS),
      ),
  ).action(async (options: StageOptions & { algorithm?: TokenSigningAlgorithm }) => {
    const now = new Date();
    if (options.table === undefined) {
      const { status, retired } = rotateLocalSigningKey(dataDir(), now, options.algorithm);
      if (retired !== undefined)
        console.log(`Retired the previous key ${retired}, past its tokens' lifetime`);
      console.log(
        `Signs now:    ${status.current.kid} ${status.current.algorithm} (a running service within a second, else from its start)`,
      );
      console.log(
        `Verifies too: ${status.previous?.kid} ${status.previous?.algorithm} until retired: npm run keys -- retire, from ${status.previous?.retiresAt.toISOString()}`,
      );
      return;
    }
    if (options.algorithm !== undefined) {
      throw new OperatorError(
        '--algorithm is for the local data folder: on a stage the newest KMS key signs with its own algorithm (-c signingKeyEs256FromGeneration, docs/keys.md)',
      );
    }
    const heldKeyIds = splitKeyIds(options.signingKeyIds);
    const { store, kms } = await stage({ ...options, table: options.table });
    const before = await storedOrInitial(store, heldKeyIds);
    const newest = heldKeyIds.at(-1) as string;
    const unheld = before.keys.find((key) => !heldKeyIds.includes(key.keyId));
    if (unheld !== undefined && effectiveSigningKeys(before, now).published.includes(unheld.keyId)) {
      throw new OperatorError(
        `the schedule still uses ${unheld.keyId}, which is not among --signing-key-ids: deploy the previous signingKeyGeneration again until it is retired`,
      );
    }
    const after = scheduleRotation(before, newest, now, AWS_ROTATION_TIMING);
    // The key must exist and sign RS256 or ES256 before anyone is told to trust it.
    const [jwk] = (await kmsSigner(newest, kms).publicJwks()).keys;
    await saved(store, before, after);
    console.log(`Rotation scheduled on ${options.table}:`);
    console.log(
      `  ${newest} (kid ${jwk?.kid}, ${jwk?.alg}) is published now and signs from ${after.keys[1]?.signsFrom}`,
    );
    console.log(
      `  ${after.keys[0]?.keyId} verifies until ${after.keys[0]?.retiresAt}; then: npm run keys -- retire`,
    );
  });

  targetOptions(
    program
      .command('retire')
      .description('Stop verifying with the previous key, once its tokens have expired (or --now)')
      .option(
        '--now',
        'retire it before its tokens expire (a key thought compromised): they are refused once the authorizer cache ends (30 s; on a stage 60 s)',
        false,
      ),
  ).action(async (options: StageOptions & { now: boolean }) => {
    const now = new Date();
    if (options.table === undefined) {
      const retired = retireLocalSigningKey(dataDir(), { immediately: options.now }, now);
      console.log(
        retired === undefined
          ? 'No previous key to retire'
          : `Retired the previous key ${retired}: its tokens are refused within 30 s (a token used just before keeps the authorizer's cached answer until then)`,
      );
      return;
    }
    const heldKeyIds = splitKeyIds(options.signingKeyIds);
    const { store } = await stage({ ...options, table: options.table });
    const before = await storedOrInitial(store, heldKeyIds);
    const { schedule, retired } = scheduleRetirement(before, now, { immediately: options.now });
    if (retired.length === 0) {
      console.log('No previous key to retire');
      return;
    }
    await saved(store, before, schedule);
    console.log(
      `Retired ${retired.join(', ')}: the key set stops publishing it within ${SIGNING_KEY_SCHEDULE_CACHE_SECONDS} s, and its tokens are refused within ${SIGNING_KEY_SCHEDULE_CACHE_SECONDS + 30} s (the authorizer's cached answers end)`,
    );
  });

  return program;
};

/** Runs the command line; every failure is one line on stderr and exit code 1 (2 for usage). */
export const runKeys = async (argv: readonly string[]): Promise<void> => {
  const program = keysProgram();
  program.exitOverride();
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    const exitCode = (error as { exitCode?: number }).exitCode;
    if (typeof exitCode === 'number' && (error as { code?: string }).code?.startsWith('commander.')) {
      process.exit(exitCode === 0 ? 0 : 2);
    }
    const known =
      error instanceof OperatorError ||
      error instanceof SigningKeyCommandError ||
      error instanceof SigningKeyScheduleError ||
      error instanceof DataFolderError;
    console.error(
      `keys: ${known ? (error as Error).message : error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    );
    process.exit(1);
  }
};

// Run as a command, not when a test imports it.
if (import.meta.main) {
  await runKeys(process.argv.slice(2));
}
