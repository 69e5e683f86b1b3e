import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { vi } from 'vitest';
import { privateKeySigner } from '#adapters/access/signer-local';
import type { ClientRecord } from '#domain/access/client';
import type {
  AuthenticationAttempt,
  AuthenticationCaller,
  AuthenticationCheck,
  AuthenticationThrottle,
  ClientAuditEvent,
  ClientAuditPublisher,
  ClientStore,
  ReplayGuard,
  TokenKeys,
  TokenSigner,
} from '#domain/access/ports';
import { registerClient } from '#domain/access/register-client';
import type { Clock } from '#domain/commons/ports';
import { logger } from '#shared/logger';

export const ISSUER = 'http://127.0.0.1:3000';
export const AUDIENCE = 'credit-transfers';

export class InMemoryClientStore implements ClientStore {
  readonly clients = new Map<string, ClientRecord>();
  readonly reads: string[] = [];

  async get(clientId: string): Promise<ClientRecord | undefined> {
    this.reads.push(clientId);
    return this.clients.get(clientId);
  }

  async put(client: ClientRecord): Promise<void> {
    this.clients.set(client.clientId, client);
  }

  async create(client: ClientRecord): Promise<boolean> {
    if (this.clients.has(client.clientId)) return false;
    this.clients.set(client.clientId, client);
    return true;
  }

  async update(client: ClientRecord, expectedRevision: number | undefined): Promise<boolean> {
    const stored = this.clients.get(client.clientId);
    if (stored === undefined || stored.revision !== expectedRevision) return false;
    this.clients.set(client.clientId, client);
    return true;
  }

  async list(): Promise<ClientRecord[]> {
    return [...this.clients.values()].sort((a, b) => a.clientId.localeCompare(b.clientId));
  }
}

/** Lets every attempt through unless told otherwise, and records what the issuer told it. */
export class RecordingThrottle implements AuthenticationThrottle {
  readonly checks: AuthenticationCaller[] = [];
  readonly failures: AuthenticationCaller[] = [];
  readonly successes: AuthenticationCaller[] = [];
  refusal: { retryAfterSeconds: number } | undefined;
  /** What check() answers as the failures counted so far. */
  counted = 0;
  /** Secret checks left in the source address's budget; spent by each request. */
  addressBudget = Number.POSITIVE_INFINITY;

  async check(caller: AuthenticationCaller): Promise<AuthenticationAttempt & AuthenticationCheck> {
    this.checks.push(caller);
    return this.refusal === undefined
      ? { allowed: true, failures: this.counted, window: 0 }
      : { allowed: false, failures: this.counted, window: 0, ...this.refusal };
  }

  async failed(caller: AuthenticationCaller): Promise<void> {
    this.failures.push(caller);
  }

  async succeeded(caller: AuthenticationCaller): Promise<void> {
    this.successes.push(caller);
  }

  async spendAddressBudget(): Promise<boolean> {
    this.addressBudget -= 1;
    return this.addressBudget >= 0;
  }
}

/** Finds clients in memory: the authorizer's revocation check in tests that are not about it. */
export const clientsOf = (...clients: ClientRecord[]): Pick<ClientStore, 'get'> => {
  const byId = new Map(clients.map((client) => [client.clientId, client]));
  return { get: async (clientId) => byId.get(clientId) };
};

export class RecordingAuditPublisher implements ClientAuditPublisher {
  readonly events: ClientAuditEvent[] = [];

  async publish(event: ClientAuditEvent): Promise<void> {
    this.events.push(event);
  }
}

/** A clock that moves only when a test moves it. */
export class ManualClock implements Clock {
  constructor(private current: Date = new Date('2031-05-06T07:08:09.000Z')) {}

  now(): Date {
    return new Date(this.current);
  }

  advance(seconds: number): void {
    this.current = new Date(this.current.getTime() + seconds * 1000);
  }
}

/** One RSA key per test run: generating one takes a while. */
let testKey: KeyObject | undefined;
export const testPrivateKey = (): KeyObject => {
  testKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  return testKey;
};
export const testSigner = (): TokenSigner & TokenKeys => privateKeySigner(testPrivateKey());

export const CLIENT = {
  clientId: 'acme-payments',
  secret: 'correct-horse-battery-staple',
  scopes: ['transactions:read', 'transactions:write'],
  tenant: 'acme',
};

export const storeWithClient = async (): Promise<InMemoryClientStore> => {
  const store = new InMemoryClientStore();
  await registerClient(store, CLIENT);
  return store;
};

export const lambdaContext = {} as Context;

export const proxyEvent = (overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent => ({
  resource: '/oauth/token',
  path: '/oauth/token',
  httpMethod: 'POST',
  headers: {},
  multiValueHeaders: {},
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  pathParameters: null,
  stageVariables: null,
  body: null,
  isBase64Encoded: false,
  requestContext: {} as APIGatewayProxyEvent['requestContext'],
  ...overrides,
});

export const basic = (clientId: string, secret: string): string => {
  const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(secret)}`).toString('base64')}`;
};

export const decodeJwt = (token: string) => {
  const [header, payload] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header ?? '', 'base64url').toString()) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>,
  };
};

/** Keeps test output readable; tests that care about a log line spy on it themselves. */
export const muteLogger = (): void => {
  for (const level of ['debug', 'info', 'warn', 'error'] as const)
    vi.spyOn(logger, level).mockImplementation(() => {});
};

/** Remembers jtis in memory, as the table does: the first use of each is allowed. */
export class InMemoryReplayGuard implements ReplayGuard {
  readonly seen = new Map<string, number>();
  async firstUse(kind: string, owner: string, jti: string, expiresAt: number, now: Date): Promise<boolean> {
    const key = `${kind} ${owner} ${jti}`;
    const known = this.seen.get(key);
    if (known !== undefined && known > Math.floor(now.getTime() / 1000)) return false;
    this.seen.set(key, expiresAt);
    return true;
  }
}

/** What a token issuer needs beyond the client store, keys and clock, as a stage sets it by default. */
export const issuerSettings = () => ({
  replay: new InMemoryReplayGuard(),
  tokenEndpoint: `${ISSUER}/oauth/token`,
  clientSecretsAllowed: true,
  requireDpop: false,
});

/** What an authorizer needs beyond keys, clients and claims, as a stage sets it by default. */
export const authorizerSettings = () => ({
  replay: new InMemoryReplayGuard(),
  publicUrl: ISSUER,
  requireDpop: false,
});
