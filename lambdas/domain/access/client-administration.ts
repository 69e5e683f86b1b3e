import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../commons/ports.ts';
import {
  type ClientJwkSet,
  type ClientRecord,
  MAX_ROTATION_GRACE_SECONDS,
  type TokenEndpointAuthMethod,
  withDisabled,
  withRotatedSecret,
} from './client.ts';
import { hashClientSecret } from './client-secret.ts';
import type { ClientAuditEvent, ClientAuditPublisher, ClientStore } from './ports.ts';
import {
  authenticationProblems,
  type ClientRegistration,
  InvalidClientRegistrationError,
  registerClient,
  validSecretProblems,
} from './register-client.ts';

/**
 * What operators do to clients: create, list, disable, rotate a secret. Every change is one
 * conditional write followed by one audit event; a secret is returned once to be shown, and
 * never stored, logged or published.
 */
export interface ClientAdministration {
  clients: ClientStore;
  audit: ClientAuditPublisher;
  clock: Clock;
  /** Who is making the changes, as the tool established it. */
  actor: string;
}

export class ClientAdministrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class ClientExistsError extends ClientAdministrationError {}
export class UnknownClientError extends ClientAdministrationError {}
export class ConcurrentClientChangeError extends ClientAdministrationError {}

/** A client as an operator sees it: never a secret or a hash. */
export interface ClientSummary {
  clientId: string;
  tenant: string;
  scopes: string[];
  createdAt: string;
  status: 'active' | 'disabled';
  disabledAt?: string;
  /** Until when the secret before the last rotation still works, while it does. */
  previousSecretExpiresAt?: string;
  authMethods: string[];
  /** The kids of the client's public keys (private_key_jwt). */
  keyIds: string[];
  requireDpop: boolean;
}

export const generateClientSecret = (): string => randomBytes(32).toString('base64url');

const summaryOf = (client: ClientRecord, now: Date): ClientSummary => ({
  clientId: client.clientId,
  tenant: client.tenant,
  scopes: [...client.scopes],
  createdAt: client.createdAt,
  status: client.disabledAt === undefined ? 'active' : 'disabled',
  ...(client.disabledAt !== undefined && { disabledAt: client.disabledAt }),
  ...(client.previousSecretExpiresAt !== undefined &&
    Date.parse(client.previousSecretExpiresAt) > now.getTime() && {
      previousSecretExpiresAt: client.previousSecretExpiresAt,
    }),
  authMethods: [...(client.authMethods ?? ['client_secret_basic', 'client_secret_post'])],
  keyIds: (client.jwks?.keys ?? []).map((key) => key.kid),
  requireDpop: client.requireDpop === true,
});

const publish = async (
  administration: ClientAdministration,
  action: ClientAuditEvent['action'],
  client: ClientRecord,
  date: Date,
): Promise<void> => {
  await administration.audit.publish({
    eventId: randomUUID(),
    action,
    clientId: client.clientId,
    tenant: client.tenant,
    scopes: [...client.scopes],
    actor: administration.actor,
    date: date.toISOString(),
    ...(action === 'ClientSecretRotated' &&
      client.previousSecretExpiresAt !== undefined && {
        previousSecretExpiresAt: client.previousSecretExpiresAt,
      }),
  });
};

/**
 * Creates a client with the given secret, or a generated 32-byte one. An id in use is refused
 * unless `replace` (the older `client:create`'s behaviour), which overwrites it whole.
 */
export const createClient = async (
  administration: ClientAdministration,
  registration: Omit<ClientRegistration, 'secret'> & { secret?: string },
  options: { replace?: boolean } = {},
): Promise<{ client: ClientRecord; secret: string; replaced: boolean }> => {
  const secret = registration.secret ?? generateClientSecret();
  const now = administration.clock.now();
  let replaced = false;
  let created = false;
  const client = await registerClient(
    {
      put: async (record) => {
        if (options.replace) {
          const before = await administration.clients.get(record.clientId);
          replaced = before !== undefined;
          // A replaced client is a new one: the tokens of the one it replaces stop.
          await administration.clients.put(
            before === undefined ? record : { ...record, tokenGeneration: (before.tokenGeneration ?? 0) + 1 },
          );
          created = true;
        } else {
          created = await administration.clients.create(record);
        }
      },
    },
    { ...registration, secret },
    now,
  );
  if (!created) throw new ClientExistsError(`A client ${client.clientId} exists already`);
  await publish(administration, replaced ? 'ClientReplaced' : 'ClientCreated', client, now);
  return { client, secret, replaced };
};

export const listClients = async (administration: Pick<ClientAdministration, 'clients' | 'clock'>) => {
  const now = administration.clock.now();
  return (await administration.clients.list()).map((client) => summaryOf(client, now));
};

const existing = async (administration: ClientAdministration, clientId: string): Promise<ClientRecord> => {
  const client = await administration.clients.get(clientId);
  if (client === undefined) throw new UnknownClientError(`No client ${clientId}`);
  return client;
};

const save = async (administration: ClientAdministration, before: ClientRecord, after: ClientRecord) => {
  const next = { ...after, revision: (before.revision ?? 0) + 1 };
  if (!(await administration.clients.update(next, before.revision))) {
    throw new ConcurrentClientChangeError(
      `The client ${before.clientId} was changed meanwhile by someone else; look at it again and retry`,
    );
  }
  return next;
};

/**
 * Disables a client: from now on its secret gets 401 invalid_client, as for an unknown id, and
 * its live tokens are refused once the authorizer's cached answers (30 s) run out. Disabling a
 * disabled client changes nothing and publishes nothing.
 */
export const disableClient = async (
  administration: ClientAdministration,
  clientId: string,
): Promise<{ client: ClientRecord; changed: boolean }> => {
  const before = await existing(administration, clientId);
  if (before.disabledAt !== undefined) return { client: before, changed: false };
  const now = administration.clock.now();
  const client = await save(administration, before, withDisabled(before, now));
  await publish(administration, 'ClientDisabled', client, now);
  return { client, changed: true };
};

/**
 * A new secret (given or generated); the old one keeps working for `graceSeconds`. With 0 it stops
 * at once, and the client's live tokens with it (within the authorizer's cache time).
 */
export const rotateClientSecret = async (
  administration: ClientAdministration,
  clientId: string,
  options: { secret?: string; graceSeconds: number },
): Promise<{ client: ClientRecord; secret: string }> => {
  if (
    !Number.isSafeInteger(options.graceSeconds) ||
    options.graceSeconds < 0 ||
    options.graceSeconds > MAX_ROTATION_GRACE_SECONDS
  ) {
    throw new InvalidClientRegistrationError([
      `the grace period must be 0 to ${MAX_ROTATION_GRACE_SECONDS / 86_400} days`,
    ]);
  }
  const secret = options.secret ?? generateClientSecret();
  const problems = validSecretProblems(secret);
  if (problems.length > 0) throw new InvalidClientRegistrationError(problems);
  const before = await existing(administration, clientId);
  const now = administration.clock.now();
  const client = await save(
    administration,
    before,
    withRotatedSecret(before, await hashClientSecret(secret), options.graceSeconds, now),
  );
  await publish(administration, 'ClientSecretRotated', client, now);
  return { client, secret };
};

/**
 * Replaces the client's public keys (a rotation: publish the new key beside the old one, then
 * drop the old one), and with them, when given, its methods and DPoP requirement.
 */
export const setClientKeys = async (
  administration: ClientAdministration,
  clientId: string,
  change: { jwks: ClientJwkSet; authMethods?: readonly string[]; requireDpop?: boolean },
): Promise<ClientRecord> => {
  const before = await existing(administration, clientId);
  const authMethods = change.authMethods ?? before.authMethods;
  const problems = authenticationProblems(authMethods, change.jwks);
  if (problems.length > 0) throw new InvalidClientRegistrationError(problems);
  const now = administration.clock.now();
  const client = await save(administration, before, {
    ...before,
    jwks: change.jwks,
    ...(authMethods !== undefined && { authMethods: [...new Set(authMethods)] as TokenEndpointAuthMethod[] }),
    ...(change.requireDpop !== undefined && { requireDpop: change.requireDpop }),
  });
  await publish(administration, 'ClientKeysReplaced', client, now);
  return client;
};
