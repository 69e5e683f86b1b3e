import {
  CLIENT_ID_PATTERN,
  type ClientJwkSet,
  type ClientRecord,
  TENANT_ID_PATTERN,
  TOKEN_ENDPOINT_AUTH_METHODS,
  type TokenEndpointAuthMethod,
} from './client.ts';
import { hashClientSecret } from './client-secret.ts';
import type { ClientStore } from './ports.ts';
import { isScope, type Scope } from './scopes.ts';

export const MIN_SECRET_LENGTH = 16;
export const MAX_SECRET_LENGTH = 256;

export interface ClientRegistration {
  clientId: string;
  secret: string;
  scopes: readonly string[];
  tenant: string;
  /** Public keys for private_key_jwt, checked already (parseClientJwks). */
  jwks?: ClientJwkSet;
  /** Absent: client_secret_basic and client_secret_post, as before keys existed. */
  authMethods?: readonly string[];
  requireDpop?: boolean;
}

/** Why a client's methods and keys do not fit together, if they do not. */
export const authenticationProblems = (
  authMethods: readonly string[] | undefined,
  jwks: ClientJwkSet | undefined,
): string[] => {
  if (authMethods === undefined) return [];
  const problems: string[] = [];
  const unknown = authMethods.filter(
    (method) => !(TOKEN_ENDPOINT_AUTH_METHODS as readonly string[]).includes(method),
  );
  if (unknown.length > 0) {
    problems.push(
      `unknown authentication method(s): ${unknown.join(', ')} (of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')})`,
    );
  }
  if (authMethods.length === 0) problems.push('at least one authentication method is required');
  if (authMethods.includes('private_key_jwt') && (jwks?.keys.length ?? 0) === 0) {
    problems.push("private_key_jwt needs the client's public keys (--jwks FILE)");
  }
  return problems;
};

export class InvalidClientRegistrationError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'InvalidClientRegistrationError';
  }
}

export const validSecretProblems = (secret: string): string[] =>
  secret.length < MIN_SECRET_LENGTH || secret.length > MAX_SECRET_LENGTH
    ? [`the client secret must be ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters long`]
    : [];

const problemsOf = (registration: ClientRegistration): string[] => {
  const problems: string[] = [];
  if (!CLIENT_ID_PATTERN.test(registration.clientId)) {
    problems.push('the client id must be 1 to 64 characters of A-Z a-z 0-9 . _ ~ -');
  }
  problems.push(...validSecretProblems(registration.secret));
  if (!TENANT_ID_PATTERN.test(registration.tenant)) {
    problems.push('the tenant must be 1 to 64 characters of A-Z a-z 0-9 _ -');
  }
  if (registration.scopes.length === 0) problems.push('at least one scope is required');
  const unknown = registration.scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) problems.push(`unknown scope(s): ${unknown.join(', ')}`);
  problems.push(...authenticationProblems(registration.authMethods, registration.jwks));
  return problems;
};

/** Registers a client, or replaces the one with the same id (which is how a secret is rotated). */
export const registerClient = async (
  store: Pick<ClientStore, 'put'>,
  registration: ClientRegistration,
  now: Date = new Date(),
): Promise<ClientRecord> => {
  const problems = problemsOf(registration);
  if (problems.length > 0) throw new InvalidClientRegistrationError(problems);
  const record: ClientRecord = {
    clientId: registration.clientId,
    secretHash: await hashClientSecret(registration.secret),
    scopes: [...new Set(registration.scopes)] as Scope[],
    tenant: registration.tenant,
    createdAt: now.toISOString(),
    ...(registration.jwks !== undefined && { jwks: registration.jwks }),
    ...(registration.authMethods !== undefined && {
      authMethods: [...new Set(registration.authMethods)] as TokenEndpointAuthMethod[],
    }),
    ...(registration.requireDpop === true && { requireDpop: true }),
  };
  await store.put(record);
  return record;
};
