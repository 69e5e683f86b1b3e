import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  EventBridgeClientAuditPublisher,
  JsonLinesClientAuditPublisher,
} from '#adapters/access/client-audit-publisher';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { FileTenantRateLimits } from '#adapters/access/tenant-rate-limit-file';
import { type ApiGatewaySender, UsagePlanTenantRateLimits } from '#adapters/access/usage-plans';
import { callConfig, FUNCTION_CALLS, serviceClient } from '#adapters/aws/aws-clients';
import { createDocumentClient, regionalDocumentClient } from '#adapters/aws/dynamodb-client';
import {
  type ClientJwkSet,
  DEFAULT_ROTATION_GRACE_SECONDS,
  TENANT_ID_PATTERN,
  TOKEN_ENDPOINT_AUTH_METHODS,
} from '#domain/access/client';
import {
  type ClientAdministration,
  ClientAdministrationError,
  type ClientSummary,
  createClient,
  disableClient,
  listClients,
  rotateClientSecret,
  setClientKeys,
} from '#domain/access/client-administration';
import { InvalidClientKeysError, parseClientJwks } from '#domain/access/client-keys';
import type { ClientAuditPublisher, TenantRateLimits } from '#domain/access/ports';
import { InvalidClientRegistrationError } from '#domain/access/register-client';
import { SCOPES } from '#domain/access/scopes';
import {
  InvalidTenantRateLimitError,
  type TenantRateLimit,
  tenantRateLimit,
} from '#domain/access/tenant-rate-limit';
import { systemClock } from '#domain/commons/ports';
import { dataFolderFiles } from '#local/data-folder';

/**
 * `npm run clients -- create|list|disable|rotate-secret|set-keys`: client administration for
 * operators; `set-limit|show-limit|clear-limit|admit-tenants`: per-tenant request limits (with
 * --table also --usage-plan: the stage's default usage plan).
 * Without --table it works on the running local service (its table's socket in DATA_DIR, or
 * DYNAMODB_SOCKET; TABLE_NAME; audit events appended to EVENTS_FILE or DATA_DIR/events.jsonl). With --table it
 * works on a deployed stage with the operator's AWS credentials, audit events on --event-bus.
 * A secret is printed once, on stdout, and nowhere else.
 */

interface TargetOptions {
  table?: string;
  region?: string;
  eventBus?: string;
  usagePlan?: string;
}

/** An error whose message is all an operator needs: printed as one line, exit code 1. */
class OperatorError extends Error {}

class AuditNotPublishedError extends Error {}

interface Target {
  description: string;
  administration: (needsAudit: boolean) => Promise<ClientAdministration>;
  /** Where per-tenant limits are kept: the data folder's file, or the stage's usage plans. */
  rateLimits: () => Promise<TenantRateLimits>;
  local: boolean;
  close(): void;
}

const USAGE_PLAN_REQUIRED =
  "--usage-plan is required on AWS (the stack output DefaultUsagePlanId): each tenant's API key is kept in a usage plan of the stage";

/** How a target reaches API Gateway: the SDK client, or a fake in unit tests. */
export type ApiGatewayConnector = (aws: { credentials: unknown; region: string }) => ApiGatewaySender & {
  destroy?: () => void;
};

let connectApiGateway: ApiGatewayConnector = (aws) =>
  new APIGatewayClient({ ...(aws as object), ...callConfig(FUNCTION_CALLS) });

/** Unit tests hand in a fake API Gateway. */
export const useApiGateway = (connector: ApiGatewayConnector): void => {
  connectApiGateway = connector;
};

const localTarget = (): Target => {
  const dataDir = resolve(process.env.DATA_DIR || '.local-data');
  // The table answers only on its socket inside the data folder.
  const socket = process.env.DYNAMODB_SOCKET || dataFolderFiles(dataDir).tableSocket;
  const tableName = process.env.TABLE_NAME || 'credit-transfers';
  const eventsFile = process.env.EVENTS_FILE || dataFolderFiles(dataDir).events;
  const client = createDocumentClient(undefined, socket);
  return {
    description: `table ${tableName} of the local service (DynamoDB on ${socket})`,
    local: true,
    administration: async () => ({
      clients: new DynamoDbClientStore(client, tableName),
      audit: new JsonLinesClientAuditPublisher(eventsFile),
      clock: systemClock,
      actor: `local:${userInfo().username}`,
    }),
    rateLimits: async () => new FileTenantRateLimits(dataFolderFiles(dataDir).tenantRateLimits),
    close: () => {},
  };
};

const awsTarget = (options: TargetOptions & { table: string }): Target => {
  // The SDK finds the operator's credentials and region (variables, profiles, SSO) as the AWS CLI does.
  const sts = new STSClient(options.region ? { region: options.region } : {});
  let apiGateway: ReturnType<ApiGatewayConnector> | undefined;
  return {
    description: `DynamoDB table ${options.table}${options.region ? ` in ${options.region}` : ''}`,
    local: false,
    administration: async (needsAudit) => {
      if (needsAudit && options.eventBus === undefined) {
        throw new OperatorError(
          '--event-bus is required for a change on AWS (the stack output StatusEventBusName): every change is audited',
        );
      }
      // Who: the IAM principal the credentials belong to, not a name the operator types.
      const { Arn } = await sts.send(new GetCallerIdentityCommand({}));
      // The credentials STS resolved (one SSO sign-in, say), for the table and the bus alike.
      const aws = { credentials: sts.config.credentials, region: await sts.config.region() };
      const eventBridge = serviceClient(new EventBridgeClient({ ...aws, ...callConfig(FUNCTION_CALLS) }));
      return {
        clients: new DynamoDbClientStore(regionalDocumentClient(aws), options.table),
        audit: new EventBridgeClientAuditPublisher(eventBridge, options.eventBus ?? ''),
        clock: systemClock,
        actor: Arn ?? 'unknown',
      };
    },
    rateLimits: async () => {
      if (options.usagePlan === undefined) {
        throw new OperatorError(USAGE_PLAN_REQUIRED);
      }
      apiGateway ??= connectApiGateway({
        credentials: sts.config.credentials,
        region: await sts.config.region(),
      });
      return new UsagePlanTenantRateLimits(apiGateway, options.usagePlan);
    },
    close: () => {
      sts.destroy();
      apiGateway?.destroy?.();
    },
  };
};

const targetOf = (options: TargetOptions): Target => {
  if (options.table !== undefined) return awsTarget({ ...options, table: options.table });
  if (options.region !== undefined || options.eventBus !== undefined || options.usagePlan !== undefined) {
    throw new OperatorError(
      '--region, --event-bus and --usage-plan apply only with --table (a deployed stage)',
    );
  }
  return localTarget();
};

/** A change is made first, then audited; an audit that fails is reported as such, loudly. */
const audited = (publisher: ClientAuditPublisher): ClientAuditPublisher => ({
  publish: async (event) => {
    try {
      await publisher.publish(event);
    } catch (error) {
      throw new AuditNotPublishedError(
        `the change to client ${event.clientId} is made, but its audit event (${event.action}, id ${event.eventId}) could not be published: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  },
});

const withTarget = async <T>(
  options: TargetOptions,
  needsAudit: boolean,
  work: (administration: ClientAdministration, target: Target) => Promise<T>,
): Promise<T> => {
  const target = targetOf(options);
  try {
    const administration = await target.administration(needsAudit);
    return await work({ ...administration, audit: audited(administration.audit) }, target);
  } catch (error) {
    throw explained(error, target);
  } finally {
    target.close();
  }
};

/** The per-tenant limits of the target alone: no client administration, so no audit bus or STS call. */
const withLimits = async <T>(
  options: TargetOptions,
  work: (limits: TenantRateLimits, target: Target) => Promise<T>,
): Promise<T> => {
  const target = targetOf(options);
  try {
    return await work(await target.rateLimits(), target);
  } catch (error) {
    throw explained(error, target);
  } finally {
    target.close();
  }
};

/** Turns what can go wrong into one line an operator can act on. */
const explained = (error: unknown, target: Target): Error => {
  if (
    error instanceof OperatorError ||
    error instanceof AuditNotPublishedError ||
    error instanceof ClientAdministrationError ||
    error instanceof InvalidClientRegistrationError ||
    error instanceof InvalidTenantRateLimitError
  ) {
    return error;
  }
  const name = error instanceof Error ? error.name : '';
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const hint = target.local ? '; is the service running (npm start)?' : '';
  if (name === 'ResourceNotFoundException')
    return new OperatorError(`the ${target.description} does not exist${hint}`);
  if (code === 'ECONNREFUSED') return new OperatorError(`cannot reach the ${target.description}${hint}`);
  if (error instanceof Error && error.message === 'Region is missing') {
    return new OperatorError('no AWS region: pass --region, or set AWS_REGION or a profile with one');
  }
  if (name === 'CredentialsProviderError') {
    return new OperatorError(
      `no AWS credentials (set AWS_PROFILE or run aws sso login): ${(error as Error).message}`,
    );
  }
  return new OperatorError(
    `failed on the ${target.description}: ${name || 'Error'}: ${error instanceof Error ? error.message : String(error)}`,
  );
};

const DURATION = /^(\d+)(s|m|h|d)?$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** `90s`, `15m`, `24h`, `7d`, or seconds; `0` stops the old secret at once. */
export const parseDuration = (value: string): number => {
  const match = DURATION.exec(value.trim());
  if (!match?.[1]) throw new InvalidArgumentError('give a duration like 0, 90s, 15m, 24h or 7d');
  return Number(match[1]) * UNIT_SECONDS[(match[2] ?? 's') as keyof typeof UNIT_SECONDS];
};

const splitScopeList = (value: string): string[] => value.split(/[\s,]+/).filter((scope) => scope !== '');

/** A key file, checked before anything is changed: private keys and other algorithms are refused. */
const readClientKeys = async (path: string): Promise<ClientJwkSet> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new OperatorError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  try {
    return await parseClientJwks(text);
  } catch (error) {
    if (error instanceof InvalidClientKeysError) throw new OperatorError(`${path}: ${error.message}`);
    throw error;
  }
};

const printSecret = (secret: string) => {
  console.log(`  client_secret: ${secret}\n  (shown once: only its hash is stored)`);
};

const describe = (client: ClientSummary): string =>
  [
    client.clientId.padEnd(24),
    client.tenant.padEnd(16),
    client.status.padEnd(9),
    client.createdAt,
    client.scopes.join(' '),
    client.previousSecretExpiresAt ? `(previous secret until ${client.previousSecretExpiresAt})` : '',
    client.keyIds.length > 0 ? `[${client.authMethods.join(' ')}; keys ${client.keyIds.join(' ')}]` : '',
    client.requireDpop ? '[DPoP]' : '',
  ]
    .join('  ')
    .trimEnd();

const targetOptions = (command: Command): Command =>
  command
    .option(
      '--table <name>',
      'a deployed stage: the table (stack output TableName); default: the local service',
    )
    .option('--region <region>', 'with --table: the AWS region (default: from the AWS configuration)')
    .option('--event-bus <name>', 'with --table: the bus for audit events (stack output StatusEventBusName)')
    .option(
      '--usage-plan <id>',
      "with --table: the stage's default usage plan (stack output DefaultUsagePlanId), for tenant limits",
    );

export const clientsProgram = (): Command => {
  const program = new Command('clients')
    .description(
      'Administer API clients (create, list, disable, rotate-secret, set-keys) and tenant limits (set-limit, show-limit, clear-limit, admit-tenants)',
    )
    .showSuggestionAfterError()
    .configureOutput({ outputError: (message, write) => write(message.replace(/^error: /, 'clients: ')) });

  targetOptions(
    program
      .command('create')
      .description('Create a client; prints a generated secret once')
      .requiredOption('--client-id <id>', '1 to 64 characters of A-Z a-z 0-9 . _ ~ -')
      .requiredOption('--scope <scopes>', `space- or comma-separated, of: ${SCOPES.join(' ')}`)
      .requiredOption('--tenant <tenant>', 'the tenant whose payments the client sees')
      .option('--client-secret <secret>', 'use this secret (16 to 256 characters) instead of a generated one')
      .option(
        '--jwks <file>',
        "a JWK Set of the client's public keys (ES256, PS256 or EdDSA) for private_key_jwt",
      )
      .option(
        '--auth-methods <methods>',
        `space- or comma-separated, of: ${TOKEN_ENDPOINT_AUTH_METHODS.join(' ')} (default: private_key_jwt with --jwks, the secret methods without)`,
      )
      .option('--require-dpop', 'every token of this client must be DPoP-bound', false)
      .option('--replace', 'overwrite a client with the same id (secret, scopes, tenant, status)', false),
  ).action(async (options: TargetOptions & Record<string, string | boolean | undefined>) => {
    const jwks = typeof options.jwks === 'string' ? await readClientKeys(options.jwks) : undefined;
    const authMethods =
      typeof options.authMethods === 'string'
        ? splitScopeList(options.authMethods)
        : jwks !== undefined
          ? ['private_key_jwt']
          : undefined;
    const usesSecret =
      authMethods === undefined || authMethods.some((method) => method.startsWith('client_secret'));
    // Before anything is read or written: a client of a tenant with no API key could call nothing.
    if (options.table !== undefined && options.usagePlan === undefined)
      throw new OperatorError(USAGE_PLAN_REQUIRED);
    await withTarget(options, true, async (administration, target) => {
      // On AWS the tenant's API key must be in a usage plan before its client calls anything:
      // checked first, so a client is never made whose calls would all be refused.
      const limits = await target.rateLimits();
      await limits.admit(options.tenant as string);
      const { client, secret, replaced } = await createClient(
        administration,
        {
          clientId: options.clientId as string,
          scopes: splitScopeList(options.scope as string),
          tenant: options.tenant as string,
          ...(typeof options.clientSecret === 'string' && { secret: options.clientSecret }),
          ...(jwks !== undefined && { jwks }),
          ...(authMethods !== undefined && { authMethods }),
          ...(options.requireDpop === true && { requireDpop: true }),
        },
        { replace: options.replace === true },
      );
      console.log(
        `${replaced ? 'Replaced' : 'Registered'} client ${client.clientId} (tenant ${client.tenant}; scopes ${client.scopes.join(' ')})`,
      );
      console.log(`  in the ${target.description}`);
      if (client.authMethods !== undefined)
        console.log(`  authenticates with: ${client.authMethods.join(' ')}`);
      if (client.jwks !== undefined)
        console.log(`  keys: ${client.jwks.keys.map((key) => `${key.kid} (${key.alg})`).join(', ')}`);
      if (client.requireDpop) console.log('  its tokens must be DPoP-bound');
      // A key-only client's secret is never usable: it is not shown.
      if (options.clientSecret === undefined && usesSecret) printSecret(secret);
    });
  });

  targetOptions(
    program
      .command('set-keys')
      .description(
        "Replace a client's public keys (rotation: publish the new key beside the old, then drop the old)",
      )
      .requiredOption('--client-id <id>', 'the client')
      .requiredOption('--jwks <file>', "a JWK Set of the client's public keys (ES256, PS256 or EdDSA)")
      .option(
        '--auth-methods <methods>',
        `space- or comma-separated, of: ${TOKEN_ENDPOINT_AUTH_METHODS.join(' ')}`,
      )
      .option('--require-dpop', 'every token of this client must be DPoP-bound')
      .option('--no-require-dpop', 'tokens of this client may be Bearer tokens'),
  ).action(
    async (
      options: TargetOptions & {
        clientId: string;
        jwks: string;
        authMethods?: string;
        requireDpop?: boolean;
      },
    ) => {
      const jwks = await readClientKeys(options.jwks);
      await withTarget(options, true, async (administration) => {
        const client = await setClientKeys(administration, options.clientId, {
          jwks,
          ...(options.authMethods !== undefined && { authMethods: splitScopeList(options.authMethods) }),
          ...(options.requireDpop !== undefined && { requireDpop: options.requireDpop }),
        });
        console.log(
          `Client ${client.clientId} now has the keys ${jwks.keys.map((key) => `${key.kid} (${key.alg})`).join(', ')}`,
        );
        console.log(
          `  authenticates with: ${(client.authMethods ?? ['client_secret_basic', 'client_secret_post']).join(' ')}`,
        );
      });
    },
  );

  targetOptions(
    program
      .command('list')
      .description('List the clients (never a secret or a hash)')
      .option('--json', 'one JSON document, for scripts', false),
  ).action(async (options: TargetOptions & { json: boolean }) => {
    await withTarget(options, false, async (administration) => {
      const clients = await listClients(administration);
      if (options.json) return console.log(JSON.stringify(clients, null, 2));
      if (clients.length === 0) return console.log('No clients');
      for (const client of clients) console.log(describe(client));
    });
  });

  targetOptions(
    program
      .command('disable')
      .description('Disable a client: its secret is refused from now on, its live tokens within 30 s')
      .requiredOption('--client-id <id>', 'the client to disable'),
  ).action(async (options: TargetOptions & { clientId: string }) => {
    await withTarget(options, true, async (administration) => {
      const { client, changed } = await disableClient(administration, options.clientId);
      console.log(
        changed
          ? `Disabled client ${client.clientId} at ${client.disabledAt}; its live tokens are refused within 30 s`
          : `Client ${client.clientId} was disabled already, at ${client.disabledAt}`,
      );
    });
  });

  targetOptions(
    program
      .command('rotate-secret')
      .description('Give a client a new secret; the old one keeps working for the grace period')
      .requiredOption('--client-id <id>', 'the client')
      .option('--client-secret <secret>', 'use this secret (16 to 256 characters) instead of a generated one')
      .addOption(
        new Option(
          '--grace <duration>',
          'how long the old secret keeps working: 0 (also revokes the live tokens), 90s, 15m, 24h, 7d',
        )
          .default(DEFAULT_ROTATION_GRACE_SECONDS, '24h')
          .argParser(parseDuration),
      ),
  ).action(async (options: TargetOptions & { clientId: string; clientSecret?: string; grace: number }) => {
    await withTarget(options, true, async (administration) => {
      const { client, secret } = await rotateClientSecret(administration, options.clientId, {
        graceSeconds: options.grace,
        ...(options.clientSecret !== undefined && { secret: options.clientSecret }),
      });
      console.log(`Rotated the secret of client ${client.clientId}`);
      console.log(
        client.previousSecretExpiresAt
          ? `  the previous secret works until ${client.previousSecretExpiresAt}`
          : '  the previous secret no longer works, nor do the tokens issued before (within 30 s)',
      );
      if (options.clientSecret === undefined) printSecret(secret);
    });
  });

  targetOptions(
    program
      .command('set-limit')
      .description(
        'Give a tenant a request limit of its own, in place of the default (on AWS: a usage plan of its own)',
      )
      .requiredOption('--tenant <tenant>', 'the tenant')
      .requiredOption('--rate <n>', 'requests per second', parseWhole)
      .option('--burst <n>', 'requests at once after a quiet while (default: twice the rate)', parseWhole),
  ).action(async (options: TargetOptions & { tenant: string; rate: number; burst?: number }) => {
    const limit = tenantRateLimit(options.rate, options.burst ?? 2 * options.rate);
    const tenant = checkedTenant(options.tenant);
    await withLimits(options, async (limits, target) => {
      await limits.set(tenant, limit);
      console.log(`Tenant ${tenant}: ${describeLimit(limit)} (its own limit)`);
      console.log(
        `  in the ${target.local ? `local service's data folder (${LOCAL_LIMITS_NOTE})` : target.description}`,
      );
    });
  });

  targetOptions(
    program
      .command('show-limit')
      .description("Show a tenant's request limit, or every tenant with a limit of its own")
      .option('--tenant <tenant>', 'the tenant (default: every tenant with a limit of its own)'),
  ).action(async (options: TargetOptions & { tenant?: string }) => {
    await withLimits(options, async (limits, target) => {
      if (options.tenant !== undefined) {
        const tenant = checkedTenant(options.tenant);
        const limit = await limits.get(tenant);
        return console.log(
          limit === undefined
            ? `Tenant ${tenant}: the default (${target.local ? 'TENANT_RATE_LIMIT' : 'the stack context tenantRateLimit'})`
            : `Tenant ${tenant}: ${describeLimit(limit)} (its own limit)`,
        );
      }
      const all = await limits.list();
      if (all.length === 0) return console.log('No tenant has a limit of its own');
      for (const { tenant, limit } of all) console.log(`${tenant.padEnd(16)}  ${describeLimit(limit)}`);
    });
  });

  targetOptions(
    program
      .command('clear-limit')
      .description("Take a tenant's own limit away: the default applies again")
      .requiredOption('--tenant <tenant>', 'the tenant'),
  ).action(async (options: TargetOptions & { tenant: string }) => {
    const tenant = checkedTenant(options.tenant);
    await withLimits(options, async (limits) => {
      const cleared = await limits.clear(tenant);
      console.log(
        cleared
          ? `Tenant ${tenant}: the default limit applies again`
          : `Tenant ${tenant} had no limit of its own`,
      );
    });
  });

  targetOptions(
    program
      .command('admit-tenants')
      .description(
        "Put every tenant's API key in the stage's default usage plan unless it is in a plan already (once, after the first deployment with usage plans)",
      ),
  ).action(async (options: TargetOptions) => {
    await withTarget(options, false, async (administration, target) => {
      const limits = await target.rateLimits();
      const tenants = [...new Set((await listClients(administration)).map((client) => client.tenant))].sort();
      for (const tenant of tenants) await limits.admit(tenant);
      console.log(`Admitted ${tenants.length} tenant(s): ${tenants.join(' ') || 'none'}`);
    });
  });

  return program;
};

const LOCAL_LIMITS_NOTE = 'applied while the service runs with TENANT_RATE_LIMIT set';

const describeLimit = (limit: TenantRateLimit): string =>
  `${limit.ratePerSecond} requests per second, bursts of ${limit.burst}`;

const parseWhole = (value: string): number => {
  if (!/^\d{1,9}$/.test(value.trim())) throw new InvalidArgumentError('give a whole number');
  return Number(value.trim());
};

const checkedTenant = (tenant: string): string => {
  if (!TENANT_ID_PATTERN.test(tenant))
    throw new OperatorError(`--tenant must be 1 to 64 characters of A-Z a-z 0-9 _ -`);
  return tenant;
};

/** Runs the command line; every failure is one line on stderr and exit code 1 (2 for usage). */
export const runClients = async (argv: readonly string[]): Promise<void> => {
  // What a command writes into the data folder (the audit events, the rate limits) is the owner's
  // alone, as the service's files are. Set here, by the command, not by the program a test drives.
  process.umask(0o077);
  const program = clientsProgram();
  program.exitOverride();
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    const exitCode = (error as { exitCode?: number }).exitCode;
    // Commander has printed its own message (or the help) already.
    if (typeof exitCode === 'number' && (error as { code?: string }).code?.startsWith('commander.')) {
      process.exit(exitCode === 0 ? 0 : 2);
    }
    console.error(`clients: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
};

// Run as a command, not when a test imports it.
if (import.meta.main) {
  await runClients(process.argv.slice(2));
}
