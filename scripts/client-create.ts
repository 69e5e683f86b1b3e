import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbClientStore } from '#adapters/client-store';
import { createDocumentClient } from '#adapters/dynamodb-client';
import { InvalidClientRegistrationError, registerClient } from '#auth/register-client';
import { SCOPES } from '#domain/scopes';

/**
 * `npm run client:create -- --client-id ID [--client-secret SECRET] --scope "a b" --tenant T`
 * registers a client, or replaces one with the same id (a secret rotation). By default it writes
 * to the running local service; with --aws to a deployed table through the default credentials.
 * Without --client-secret a secret is generated and printed once.
 */
const USAGE = `Usage: npm run client:create -- --client-id ID [--client-secret SECRET] --scope "SCOPE ..." --tenant TENANT
                                [--aws --table-name NAME [--region REGION]]
Scopes: ${SCOPES.join(' ')}`;

const fail = (message: string, exitCode = 2): never => {
  // A usage error shows the usage; a failure to write does not.
  console.error(exitCode === 2 ? `client:create: ${message}\n${USAGE}` : `client:create: ${message}`);
  process.exit(exitCode);
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

const clientId = parsed['client-id'] ?? fail('--client-id is required');
const tenant = parsed.tenant ?? fail('--tenant is required');
const scopes = (parsed.scope ?? fail('--scope is required')).split(/[\s,]+/).filter((scope) => scope !== '');
const generatedSecret =
  parsed['client-secret'] === undefined ? randomBytes(32).toString('base64url') : undefined;
const secret = parsed['client-secret'] ?? (generatedSecret as string);
if (parsed.region !== undefined && !parsed.aws) fail('--region applies only with --aws');

let target: { client: DynamoDBDocumentClient; tableName: string; description: string };
if (parsed.aws) {
  const tableName = parsed['table-name'] ?? fail('--aws needs --table-name (the stack output TableName)');
  target = {
    client: DynamoDBDocumentClient.from(new DynamoDBClient(parsed.region ? { region: parsed.region } : {})),
    tableName,
    description: `DynamoDB table ${tableName}${parsed.region ? ` in ${parsed.region}` : ''}`,
  };
} else {
  const endpoint = process.env.DYNAMODB_ENDPOINT || `http://127.0.0.1:${process.env.DYNAMODB_PORT || '8000'}`;
  const tableName = parsed['table-name'] ?? (process.env.TABLE_NAME || 'credit-transfers');
  target = {
    client: createDocumentClient(endpoint),
    tableName,
    description: `table ${tableName} of the local service (DynamoDB at ${endpoint})`,
  };
}

try {
  const client = await registerClient(new DynamoDbClientStore(target.client, target.tableName), {
    clientId,
    secret,
    scopes,
    tenant,
  });
  console.log(
    `Registered client ${client.clientId} (tenant ${client.tenant}; scopes ${client.scopes.join(' ')})`,
  );
  console.log(`  in the ${target.description}`);
  if (generatedSecret !== undefined) {
    console.log(`  client_secret: ${generatedSecret}\n  (shown once: only its hash is stored)`);
  }
} catch (error) {
  if (error instanceof InvalidClientRegistrationError) fail(error.message);
  const name = error instanceof Error ? error.name : '';
  const code = (error as NodeJS.ErrnoException).code;
  if (name === 'ResourceNotFoundException') {
    fail(
      `the ${target.description} does not exist${parsed.aws ? '' : '; is the service running (npm start)?'}`,
      1,
    );
  }
  if (code === 'ECONNREFUSED')
    fail(`cannot reach the ${target.description}; is the service running (npm start)?`, 1);
  fail(`could not register the client: ${error instanceof Error ? error.message : String(error)}`, 1);
} finally {
  target.client.destroy();
}
