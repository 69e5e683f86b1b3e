import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import type { Clock } from '#domain/commons/ports';
import type { Rail } from '#domain/credit-transfers/ports';
import { optionalEnv, requiredEnv, wholeNumberEnv } from '#shared/config';
import type { DocumentClient } from '../aws/dynamodb-client.ts';
import { secretsManagerClient } from '../aws/secrets-manager-client.ts';
import type { ConnectorSettings, SigningKeySource } from './connector-rail.ts';
import { SandboxRail } from './sandbox-rail.ts';

/**
 * The rail this deployment uses: `RAIL=sandbox|connector`, by default the connector when
 * CONNECTOR_URL is set and the sandbox otherwise. The connector's signing key is CONNECTOR_SECRET
 * (local runtime) or the Secrets Manager secret CONNECTOR_SECRET_ARN (AWS).
 */
export const railFromEnvironment = (client: DocumentClient, tableName: string, clock: Clock): Rail => {
  const kind = optionalEnv('RAIL') ?? (optionalEnv('CONNECTOR_URL') === undefined ? 'sandbox' : 'connector');
  if (kind === 'sandbox') return new SandboxRail(client, tableName, clock);
  if (kind === 'connector') return connectorRail(connectorSettings(), connectorSigningKey());
  throw new Error(`RAIL must be sandbox or connector, got ${kind}`);
};

/**
 * The connector rail, its module loaded at its first call: the schemas that check the connector's
 * answers are built when it loads, and a function that never reaches the rail should not pay for them.
 */
const connectorRail = (settings: ConnectorSettings, signingKey: SigningKeySource): Rail => {
  let rail: Promise<Rail> | undefined;
  const loaded = (): Promise<Rail> => {
    rail ??= import('./connector-rail.ts').then(
      ({ ConnectorRail }) => new ConnectorRail(settings, signingKey),
    );
    return rail;
  };
  return {
    checkCustomerProfile: async (payment) => (await loaded()).checkCustomerProfile(payment),
    submit: async (payment) => (await loaded()).submit(payment),
    clearingStatus: async (payment) => (await loaded()).clearingStatus(payment),
    recall: async (payment) => (await loaded()).recall(payment),
  };
};

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export const connectorSettings = (): ConnectorSettings => {
  const raw = requiredEnv('CONNECTOR_URL');
  let baseUrl: URL;
  try {
    baseUrl = new URL(raw.endsWith('/') ? raw : `${raw}/`);
  } catch {
    throw new Error(`CONNECTOR_URL is not a URL: ${raw}`);
  }
  // Payment data and signatures travel only over TLS, except to this machine's own stand-in.
  if (baseUrl.protocol !== 'https:' && !(baseUrl.protocol === 'http:' && LOOPBACK.has(baseUrl.hostname))) {
    throw new Error('CONNECTOR_URL must be https (plain http only to a loopback address)');
  }
  return {
    baseUrl,
    timeoutMs: wholeNumberEnv('CONNECTOR_TIMEOUT_MS', 2500, { min: 1 }),
    maxAttempts: wholeNumberEnv('CONNECTOR_MAX_ATTEMPTS', 3, { min: 1 }),
    backoffMs: wholeNumberEnv('CONNECTOR_BACKOFF_MS', 200, { min: 1 }),
    deadlineMs: wholeNumberEnv('CONNECTOR_DEADLINE_MS', 8000, { min: 1 }),
  };
};

/** How long a key read from Secrets Manager is used before it is read again (rotation). */
const SECRET_CACHE_MS = 5 * 60 * 1000;

export const connectorSigningKey = (): SigningKeySource => {
  const local = optionalEnv('CONNECTOR_SECRET');
  if (local !== undefined) return async () => local;
  const secretArn = requiredEnv('CONNECTOR_SECRET_ARN');
  let cached: { key: Promise<string>; until: number } | undefined;
  return () => {
    if (cached === undefined || Date.now() > cached.until) {
      const key = readSecret(secretArn);
      // A failed read is not kept: the next call asks again.
      key.catch(() => {
        cached = undefined;
      });
      cached = { key, until: Date.now() + SECRET_CACHE_MS };
    }
    return cached.key;
  };
};

const readSecret = async (secretArn: string): Promise<string> => {
  const { SecretString } = await secretsManagerClient().send(
    new GetSecretValueCommand({ SecretId: secretArn }),
  );
  if (SecretString === undefined || SecretString === '')
    throw new Error('The connector signing secret is empty');
  return SecretString;
};
