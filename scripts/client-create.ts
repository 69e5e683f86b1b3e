import { parseArgs } from 'node:util';
import { runClients } from './clients.ts';

/**
 * `npm run client:create -- --client-id ID [--client-secret SECRET] --scope "a b" --tenant T
 * [--aws --table-name NAME --usage-plan ID [--region R] --event-bus BUS]`: the older spelling of
 * `npm run clients -- create --replace`, which registers a client or replaces one with the same id
 * and, on a stage, admits its tenant to the usage plan in the same command.
 */
const USAGE = `Usage: npm run client:create -- --client-id ID [--client-secret SECRET] --scope "SCOPE ..." --tenant TENANT
                                [--aws --table-name NAME --usage-plan ID [--region REGION] --event-bus BUS]
The same as: npm run clients -- create --replace ... (see npm run clients -- create --help)`;

export class ClientCreateUsageError extends Error {}

/** The `clients create` arguments the older spelling stands for. */
export const clientsArguments = (argv: readonly string[]): string[] | 'help' => {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new ClientCreateUsageError((error as Error).message);
  }
  if (parsed.help) return 'help';
  const passed = (name: string, value: string | undefined): string[] =>
    value === undefined ? [] : [name, value];
  if (
    !parsed.aws &&
    (parsed.region !== undefined || parsed['event-bus'] !== undefined || parsed['usage-plan'] !== undefined)
  ) {
    throw new ClientCreateUsageError('--region, --event-bus and --usage-plan apply only with --aws');
  }
  if (parsed.aws && parsed['table-name'] === undefined)
    throw new ClientCreateUsageError('--aws needs --table-name (the stack output TableName)');
  // Without it the tenant's calls would all be refused (403) until someone admitted it.
  if (parsed.aws && parsed['usage-plan'] === undefined)
    throw new ClientCreateUsageError(
      '--aws needs --usage-plan (the stack output DefaultUsagePlanId): the tenant is admitted to it in the same command, or its calls are refused',
    );
  return [
    'create',
    '--replace',
    ...passed('--client-id', parsed['client-id']),
    ...passed('--client-secret', parsed['client-secret']),
    ...passed('--scope', parsed.scope),
    ...passed('--tenant', parsed.tenant),
    ...(parsed.aws ? passed('--table', parsed['table-name']) : []),
    ...passed('--region', parsed.region),
    ...passed('--event-bus', parsed['event-bus']),
    ...passed('--usage-plan', parsed['usage-plan']),
  ];
};

const parse = (argv: readonly string[]) =>
  parseArgs({
    args: [...argv],
    options: {
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      scope: { type: 'string' },
      tenant: { type: 'string' },
      aws: { type: 'boolean', default: false },
      'table-name': { type: 'string' },
      region: { type: 'string' },
      'event-bus': { type: 'string' },
      'usage-plan': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  }).values;

// Run as a command, not when a test imports it.
if (import.meta.main) {
  const argv = process.argv.slice(2);
  let args: string[] | 'help';
  try {
    args = clientsArguments(argv);
  } catch (error) {
    console.error(`client:create: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (args === 'help') {
    console.log(USAGE);
    process.exit(0);
  }
  const { aws, 'table-name': tableName } = parse(argv);
  // Locally --table-name names the local service's table, as TABLE_NAME does.
  if (!aws && tableName !== undefined) process.env.TABLE_NAME = tableName;
  await runClients(args);
}
