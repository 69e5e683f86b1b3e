import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CreditTransfersClient, isFinal, PAYMENT_STATUSES } from '../client.ts';
import { parseDuration } from '../duration.ts';
import { ApiError, CreditTransfersError } from '../errors.ts';
import type { PrivateKeyJwtOptions } from '../key-authentication.ts';
import { CHANGE_FIELDS, DEFAULT_STUCK_AFTER_MS, pollOnce } from '../poll.ts';
import type { CreditTransferRequest, ListFilters, StatusReport } from '../types.ts';
import { addApprovalCommands } from './approvals.ts';
import { addBatchCommands } from './batches.ts';
import {
  CSV_COLUMNS,
  csv,
  FORMATS,
  type Format,
  formatTransfer,
  formatTransfers,
  LineWriter,
  parseColumns,
  TRANSFER_COLUMNS,
} from './output.ts';
import { Spinner } from './spinner.ts';
import { addWebhookCommands } from './webhooks.ts';

/**
 * Exit codes: 0 done, 1 error (the service refused, bad input, unreachable), 3 a transfer is
 * stuck (poll), 4 the transfer ended Rejected or Cancelled (with --fail-unless-settled).
 */
export const EXIT = { ok: 0, error: 1, stuck: 3, notSettled: 4 } as const;

/** A mistake of the person running the command: one line, no stack. */
class UsageError extends Error {}

/** The package's version, from its package.json (beside src/ and dist/ alike). */
const CLIENT_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** The list filters, spelled exactly as the API's query parameters. */
const LIST_FILTERS = [
  'paymentId.eq',
  'status.eq',
  'paymentMethod.eq',
  'debtorAccountId.eq',
  'creditorAccountId.eq',
  'creditorAccountNumber.eq',
  'checkType.eq',
  'checkNumber.eq',
  'checkNumber.lte',
  'checkNumber.gte',
  'amount.lte',
  'amount.gte',
  'checkDate.lte',
  'checkDate.gte',
  'endToEndId.eq',
  'instructionId.eq',
  'batchId.eq',
] as const satisfies readonly (keyof ListFilters)[];
type MissingFilter = Exclude<keyof ListFilters, (typeof LIST_FILTERS)[number]>;
const everyFilterListed: [MissingFilter] extends [never] ? true : MissingFilter = true;
void everyFilterListed;

interface GlobalOptions {
  apiUrl?: string;
  tokenUrl?: string;
  clientId?: string;
  clientSecret?: string;
  privateKey?: string;
  kid?: string;
  dpop?: boolean;
  scope?: string;
  format: Format;
}

const SETTINGS = [
  ['apiUrl', 'CREDIT_TRANSFERS_API_URL', '--api-url'],
  ['clientId', 'CREDIT_TRANSFERS_CLIENT_ID', '--client-id'],
] as const;

const CLIENT_AUTHENTICATION_MISSING =
  'CREDIT_TRANSFERS_CLIENT_SECRET (or --client-secret), or CREDIT_TRANSFERS_PRIVATE_KEY_FILE (or --private-key) with --kid';

/** A client secret, or a private key file (PKCS#8 PEM) with its kid: private_key_jwt. */
const clientAuthentication = (
  options: GlobalOptions,
  value: (flag: string | undefined, variable: string) => string | undefined,
): { clientSecret: string } | { privateKeyJwt: PrivateKeyJwtOptions } => {
  const keyFile = value(options.privateKey, 'CREDIT_TRANSFERS_PRIVATE_KEY_FILE');
  const secret = value(options.clientSecret, 'CREDIT_TRANSFERS_CLIENT_SECRET');
  if (keyFile === undefined) {
    if (secret === undefined) {
      throw new UsageError(`Missing configuration: ${CLIENT_AUTHENTICATION_MISSING}`);
    }
    return { clientSecret: secret };
  }
  const kid = value(options.kid, 'CREDIT_TRANSFERS_KID');
  if (kid === undefined)
    throw new UsageError('--private-key needs the key id: CREDIT_TRANSFERS_KID (or --kid)');
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(keyFile, 'utf8'));
  } catch (error) {
    throw new UsageError(
      `Cannot read a PEM private key from ${keyFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  return { privateKeyJwt: { key, kid } };
};

const configuration = (options: GlobalOptions) => {
  const value = (flag: string | undefined, variable: string) => {
    const text = flag ?? process.env[variable];
    return text === undefined || text === '' ? undefined : text;
  };
  const missing = SETTINGS.filter(([key, variable]) => value(options[key], variable) === undefined).map(
    ([, variable, flag]) => `${variable} (or ${flag})`,
  );
  // Named with the others, so one run lists everything that is missing.
  if (
    value(options.clientSecret, 'CREDIT_TRANSFERS_CLIENT_SECRET') === undefined &&
    value(options.privateKey, 'CREDIT_TRANSFERS_PRIVATE_KEY_FILE') === undefined
  )
    missing.push(CLIENT_AUTHENTICATION_MISSING);
  if (missing.length > 0) throw new UsageError(`Missing configuration: ${missing.join(', ')}`);
  const apiUrl = value(options.apiUrl, 'CREDIT_TRANSFERS_API_URL') as string;
  if (!URL.canParse(apiUrl) || !/^https?:$/.test(new URL(apiUrl).protocol))
    throw new UsageError(`CREDIT_TRANSFERS_API_URL is not an http(s) URL: ${apiUrl}`);
  const tokenUrl = value(options.tokenUrl, 'CREDIT_TRANSFERS_TOKEN_URL');
  if (tokenUrl !== undefined && !URL.canParse(tokenUrl))
    throw new UsageError(`CREDIT_TRANSFERS_TOKEN_URL is not a URL: ${tokenUrl}`);
  return {
    apiUrl,
    clientId: value(options.clientId, 'CREDIT_TRANSFERS_CLIENT_ID') as string,
    authentication: clientAuthentication(options, value),
    dpop: options.dpop === true || process.env.CREDIT_TRANSFERS_DPOP === 'true',
    tokenUrl,
    scope: value(options.scope, 'CREDIT_TRANSFERS_SCOPE'),
  };
};

const clientFrom = (options: GlobalOptions) => {
  const config = configuration(options);
  return {
    config,
    client: new CreditTransfersClient({
      baseUrl: config.apiUrl,
      clientId: config.clientId,
      ...config.authentication,
      ...(config.dpop && { dpop: true }),
      ...(config.tokenUrl !== undefined && { tokenUrl: config.tokenUrl }),
      ...(config.scope !== undefined && { scope: config.scope }),
    }),
  };
};

const out = (text: string) => process.stdout.write(text);

const durationArgument = (text: string) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0)
    throw new InvalidArgumentError('expected a duration such as 90s, 15m or 2h');
  return ms;
};

const limitArgument = (text: string) => {
  if (!/^[1-9]\d*$/.test(text) || Number(text) > 100) throw new InvalidArgumentError('expected 1 to 100');
  return Number(text);
};

const columnsArgument = (text: string) => {
  const parsed = parseColumns(text);
  if ('unknown' in parsed)
    throw new InvalidArgumentError(
      `unknown column ${parsed.unknown.map((name) => `'${name}'`).join(', ')}; the columns are ${TRANSFER_COLUMNS.join(', ')}, or all`,
    );
  return parsed.columns;
};

/** `--columns`, on every command that prints transfers. */
const columnsOption = () =>
  new Option(
    '--columns <names>',
    `comma-separated columns for csv and table (csv default: ${CSV_COLUMNS.join(',')}); all for every field`,
  ).argParser(columnsArgument);

const readTransferFile = async (path: string): Promise<CreditTransferRequest> => {
  let text: string;
  try {
    text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  try {
    return JSON.parse(text) as CreditTransferRequest;
  } catch (error) {
    throw new UsageError(`${path} is not JSON: ${(error as Error).message}`);
  }
};

const readStdin = async () => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** Shown under every command's help, with the global options (which name their variables too). */
const ENVIRONMENT_HELP = `
Environment (each flag wins over its variable):
  CREDIT_TRANSFERS_API_URL        API base URL, e.g. https://api.example.com (a path prefix is kept)
  CREDIT_TRANSFERS_TOKEN_URL      token endpoint (default: <api-url>/oauth/token)
  CREDIT_TRANSFERS_CLIENT_ID      client id
  CREDIT_TRANSFERS_CLIENT_SECRET  client secret (safer than --client-secret, which shows in ps)
  CREDIT_TRANSFERS_PRIVATE_KEY_FILE  private_key_jwt in place of a secret: a PKCS#8 PEM private key file
  CREDIT_TRANSFERS_KID            the key id of that key, as registered with the service
  CREDIT_TRANSFERS_DPOP           true: DPoP-bound tokens, with a key pair made for the run
  CREDIT_TRANSFERS_SCOPE          space-separated scopes (default: every scope the client is allowed)

Exit codes: 0 done, 1 error, 3 a transfer is stuck (poll), 4 not settled (--fail-unless-settled).`;

const waitOptions = (command: Command) =>
  command
    .option(
      '--timeout <duration>',
      'give up waiting after this long (exit 1), e.g. 90s, 15m',
      durationArgument,
    )
    .option('--fail-unless-settled', 'exit 4 when the final status is Rejected or Cancelled');

/** " (InsufficientFunds AM04)": a status's reason and its ISO code, or nothing. */
const reasonText = (report: { statusReason?: string; statusReasonCode?: string }) =>
  report.statusReason
    ? ` (${report.statusReason}${report.statusReasonCode ? ` ${report.statusReasonCode}` : ''})`
    : '';

/** Exit 4 when asked to and the transfer ended other than settled. */
const settledOrExit = (report: StatusReport | undefined, failUnlessSettled: boolean | undefined) => {
  if (failUnlessSettled && report !== undefined && report.status !== 'AcceptedSettlementCompleted') {
    process.stderr.write(`Not settled: ${report.paymentId} is ${report.status}${reasonText(report)}\n`);
    process.exitCode = EXIT.notSettled;
  }
};

export const buildProgram = () => {
  const program = new Command('credit-transfers')
    .description('Credit transfer API from the command line')
    .version(CLIENT_VERSION, '--version', "the client's version")
    .addOption(new Option('--api-url <url>', 'API base URL').env('CREDIT_TRANSFERS_API_URL'))
    .addOption(
      new Option('--token-url <url>', 'token endpoint (default: <api-url>/oauth/token)').env(
        'CREDIT_TRANSFERS_TOKEN_URL',
      ),
    )
    .addOption(new Option('--client-id <id>', 'client id').env('CREDIT_TRANSFERS_CLIENT_ID'))
    .addOption(
      new Option('--client-secret <secret>', 'client secret (prefer the variable: flags show in ps)').env(
        'CREDIT_TRANSFERS_CLIENT_SECRET',
      ),
    )
    .addOption(
      new Option(
        '--private-key <file>',
        'private_key_jwt: a PKCS#8 PEM private key file, in place of a secret',
      ).env('CREDIT_TRANSFERS_PRIVATE_KEY_FILE'),
    )
    .addOption(new Option('--kid <kid>', 'with --private-key: its key id').env('CREDIT_TRANSFERS_KID'))
    .addOption(new Option('--dpop', 'DPoP-bound tokens (RFC 9449), with a key pair made for the run'))
    .addOption(
      new Option('--scope <scopes>', 'space-separated scopes (default: all allowed)').env(
        'CREDIT_TRANSFERS_SCOPE',
      ),
    )
    .addOption(new Option('--format <format>', 'output format').choices(FORMATS).default('table'))
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', ENVIRONMENT_HELP)
    .showHelpAfterError(false)
    .exitOverride();
  const globals = () => program.opts<GlobalOptions>();

  program
    .command('token')
    .description('obtain an access token (table: the token alone, for $(...))')
    .action(async () => {
      const { client } = clientFrom(globals());
      const token = await client.tokens.tokenResponse();
      const format = globals().format;
      if (format === 'json') out(`${JSON.stringify(token, null, 2)}\n`);
      else if (format === 'csv') out(csv(['access_token', 'token_type', 'expires_in', 'scope'], [token]));
      else out(`${token.access_token}\n`);
    });

  const initiate = program
    .command('initiate')
    .description(
      'initiate a credit transfer from a JSON file (- for standard input); --wait prints its final status instead',
    )
    .requiredOption('--file <path>', 'the transfer as JSON')
    .option('--idempotency-id <key>', 'idempotency key (default: a new UUID; reuse it to repeat safely)')
    .option('--wait', 'wait for the final status and print that report')
    .addOption(columnsOption());
  waitOptions(initiate).action(
    async (options: {
      file: string;
      idempotencyId?: string;
      wait?: boolean;
      timeout?: number;
      failUnlessSettled?: boolean;
      columns?: string[];
    }) => {
      const transfer = await readTransferFile(options.file);
      const { client } = clientFrom(globals());
      const answer = await client.initiate(transfer, {
        ...(options.idempotencyId !== undefined && { idempotencyId: options.idempotencyId }),
      });
      if (!options.wait) {
        out(formatTransfer(globals().format, answer, options.columns));
        return;
      }
      const final = await client.waitForFinalStatus(answer.paymentId, {
        ...(options.timeout !== undefined && { timeoutMs: options.timeout }),
      });
      out(formatTransfer(globals().format, final, options.columns));
      settledOrExit(final, options.failUnlessSettled);
    },
  );

  const status = program
    .command('status')
    .description('status report of a transfer; --watch follows it to a final status')
    .argument('<paymentId>')
    .option('--watch', 'print one line per status change until a final status')
    .addOption(columnsOption());
  waitOptions(status).action(
    async (
      paymentId: string,
      options: { watch?: boolean; timeout?: number; failUnlessSettled?: boolean; columns?: string[] },
    ) => {
      const { client } = clientFrom(globals());
      const format = globals().format;
      if (!options.watch) {
        const { report } = await client.status(paymentId);
        out(formatTransfer(format, report, options.columns));
        if (isFinal(report.status)) settledOrExit(report, options.failUnlessSettled);
        return;
      }
      const fields =
        options.columns ??
        (format === 'csv'
          ? CSV_COLUMNS
          : ['date', 'paymentId', 'status', 'statusReason', 'statusReasonCode']);
      const spinner = new Spinner(process.stdout);
      const writer = new LineWriter(format, fields, (text) => spinner.print(text));
      spinner.start(`waiting for ${paymentId}`);
      let last: StatusReport | undefined;
      try {
        for await (const report of client.watchStatus(paymentId, {
          ...(options.timeout !== undefined && { timeoutMs: options.timeout }),
        })) {
          writer.line(report);
          last = report;
        }
      } finally {
        spinner.stop();
      }
      settledOrExit(last, options.failUnlessSettled);
    },
  );

  const list = program
    .command('list')
    .description("list transfers, newest first; filters as the API's query parameters")
    .option('--limit <n>', 'page size (1..100)', limitArgument)
    .option('--cursor <cursor>', 'start at this page (Pagination-Cursor of the previous one)')
    .option('--all', 'follow every cursor to the last page')
    .addOption(columnsOption())
    .addOption(
      new Option('--status <status>', 'only transfers in this status (status.eq)').choices(PAYMENT_STATUSES),
    );
  for (const filter of LIST_FILTERS) list.option(`--${filter} <value>`, `filter ${filter}`);
  list.action(async (options: Record<string, string | number | boolean | string[] | undefined>) => {
    const columns = Array.isArray(options.columns) ? options.columns : undefined;
    const filters = Object.fromEntries(
      LIST_FILTERS.filter((name) => options[name] !== undefined).map((name) => [name, String(options[name])]),
    ) as ListFilters;
    if (typeof options.status === 'string') {
      if (filters['status.eq'] !== undefined && filters['status.eq'] !== options.status)
        throw new UsageError('--status and --status.eq name different statuses');
      filters['status.eq'] = options.status as ListFilters['status.eq'];
    }
    const { client } = clientFrom(globals());
    const paging = {
      ...(typeof options.limit === 'number' && { limit: options.limit }),
    };
    if (options.all) {
      const transfers = [];
      for await (const transfer of client.list(filters, paging)) transfers.push(transfer);
      out(formatTransfers(globals().format, transfers, columns));
      return;
    }
    const page = await client.listPage(filters, {
      ...paging,
      ...(typeof options.cursor === 'string' && { cursor: options.cursor }),
    });
    out(formatTransfers(globals().format, page.items, columns));
    if (page.cursor !== '') process.stderr.write(`More transfers: --cursor ${page.cursor} (or --all)\n`);
  });

  program
    .command('cancel')
    .description('request the cancellation of a transfer')
    .argument('<paymentId>')
    .option('--reason <text>', 'cancellationReason')
    .option('--idempotency-id <key>', 'idempotency key (default: a new UUID)')
    .addOption(columnsOption())
    .action(
      async (paymentId: string, options: { reason?: string; idempotencyId?: string; columns?: string[] }) => {
        const { client } = clientFrom(globals());
        const answer = await client.cancel(
          paymentId,
          options.reason === undefined ? {} : { cancellationReason: options.reason },
          { ...(options.idempotencyId !== undefined && { idempotencyId: options.idempotencyId }) },
        );
        out(formatTransfer(globals().format, answer, options.columns));
      },
    );

  program
    .command('poll')
    .description(
      'scheduled job: report every status change once across runs; exit 3 when a transfer is stuck',
    )
    .addHelpText(
      'after',
      '\nEach change is one line (JSON lines with --format json) carrying a changeId that is the same\n' +
        'if a run killed after printing reports it again. Exit codes: 0 done, 1 error (nothing is lost;\n' +
        'the next run carries on), 3 a transfer is stuck (named on standard error). Runs take a lock\n' +
        '(<file>.lock); a run killed while holding it is taken over after 10 s.',
    )
    .requiredOption('--state <file>', 'state file (created on the first run)')
    .addOption(
      new Option('--stuck-after <duration>', 'a non-final status older than this is stuck (90s, 15m, 2h)')
        .argParser(durationArgument)
        .default(DEFAULT_STUCK_AFTER_MS, '24h'),
    )
    .action(async (options: { state: string; stuckAfter: number }) => {
      const { client, config } = clientFrom(globals());
      const format = globals().format;
      const writer = new LineWriter(format, CHANGE_FIELDS, out);
      const result = await pollOnce({
        client,
        statePath: options.state,
        owner: { apiUrl: config.apiUrl, clientId: config.clientId },
        stuckAfterMs: options.stuckAfter,
        report: (change) => writer.line(change),
      });
      for (const error of result.errors) process.stderr.write(`Error: ${error}\n`);
      for (const stuck of result.stuck)
        process.stderr.write(`Stuck: ${stuck.paymentId} is ${stuck.status} since ${stuck.date}\n`);
      if (result.errors.length > 0) process.exitCode = EXIT.error;
      else if (result.stuck.length > 0) process.exitCode = EXIT.stuck;
    });

  const context = {
    client: () => clientFrom(globals()).client,
    format: () => globals().format,
    out,
    usageError: (message: string) => new UsageError(message),
    limitArgument,
    durationArgument,
  };
  addWebhookCommands(program, context);
  addBatchCommands(program, context);
  addApprovalCommands(program, { ...context, clientId: () => configuration(globals()).clientId });

  return program;
};

/** One line for the person at the terminal: what the service said, or what is wrong. Never a stack. */
export const describeError = (error: unknown): string => {
  if (error instanceof ApiError) {
    // A 404 is most often a URL without (or with a wrong) path prefix: say which setting to check.
    const hint =
      error.status === 404 && error.call === 'token'
        ? ' (check CREDIT_TRANSFERS_TOKEN_URL, or the path of CREDIT_TRANSFERS_API_URL)'
        : '';
    return `${error.describe()}${hint}`;
  }
  if (error instanceof UsageError || error instanceof CreditTransfersError) return error.message;
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError'))
    return 'Interrupted';
  return `Unexpected error: ${error instanceof Error ? error.message : String(error)}`;
};

export const main = async (argv: string[]): Promise<number> => {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    // Commander has printed its own message (usage, --help, --version) already.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.error;
    process.stderr.write(`Error: ${describeError(error).replaceAll(/\s*\n\s*/g, ' ')}\n`);
    return EXIT.error;
  }
};
