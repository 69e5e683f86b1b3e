import type { Scope } from './scopes.ts';

/** An API client as the service keeps it. The secret exists only as a salted scrypt hash. */
export interface ClientRecord {
  clientId: string;
  /** `scrypt$N$r$p$salt$hash`, see client-secret.ts. */
  secretHash: string;
  /** The scopes the client may be granted; a token request may ask for fewer. */
  scopes: Scope[];
  tenant: string;
  createdAt: string;
}

/** RFC 3986 unreserved characters only, so an id reads the same in JSON, forms and Basic credentials. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9._~-]{1,64}$/;
