import { parseArgs } from 'node:util';
import { runClients } from './clients.ts';

/**
 * `npm run client:create -- --client-id ID [--client-secret SECRET] --scope "a b" --tenant T
 * [--aws --table-name NAME [--region R] --event-bus BUS]`: the older spelling of
 * `npm run clients -- create --replace`, which registers a client or replaces one with the same id.
 */
const USAGE = `Usage: npm run client:create -- --client-id ID [--client-secret SECRET] --scope "SCOPE ..." --tenant TENANT
                                [--aws --table-name NAME [--region REGION] --event-bus BUS]
The same as: npm run clients -- create --replace ... (see npm run clients -- create --help)`;

const fail = (message: string): never => {
  console.error(`client:create: ${message}\n${USAGE}`);
  process.exit(2);
};

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        scope: { type: 'string' },
        tenant: { type: 'string' },
        aws: { type: 'boolean', default: false },
        'table-name': { type: 'string' },
        region: { type: 'string' },
        'event-bus': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return fail((error as Error).message);
  }
})();

if (parsed.help) {
  console.log(USAGE);
  process.exit(0);
}

const passed = (name: string, value: string | undefined): string[] =>
  value === undefined ? [] : [name, value];

if (!parsed.aws && (parsed.region !== undefined || parsed['event-bus'] !== undefined)) {
  fail('--region and --event-bus apply only with --aws');
}
if (parsed.aws && parsed['table-name'] === undefined)
  fail('--aws needs --table-name (the stack output TableName)');
// Locally --table-name names the local service's table, as TABLE_NAME does.
if (!parsed.aws && parsed['table-name'] !== undefined) process.env.TABLE_NAME = parsed['table-name'];

await runClients([
  'create',
  '--replace',
  ...passed('--client-id', parsed['client-id']),
  ...passed('--client-secret', parsed['client-secret']),
  ...passed('--scope', parsed.scope),
  ...passed('--tenant', parsed.tenant),
  ...(parsed.aws ? passed('--table', parsed['table-name']) : []),
  ...passed('--region', parsed.region),
  ...passed('--event-bus', parsed['event-bus']),
]);
