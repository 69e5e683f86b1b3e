/** The platform's OAuth scopes (spec section 5.4). */
export const SCOPES = [
  'accounts:read',
  'accounts:write',
  'transactions:read',
  'transactions:write',
  'parties:read',
  'parties:write',
  'cards:read',
  'cards:write',
  'webhooks:manage',
  'payment-controls:manage',
  'transactions:approve',
] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** Spec section 5.4, for the discovery and OpenAPI documents. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'accounts:read': 'Read account information',
  'accounts:write': 'Create and modify accounts',
  'transactions:read': 'View transaction history',
  'transactions:write': 'Create transactions',
  'parties:read': 'Read party (customer) data',
  'parties:write': 'Create and modify parties',
  'cards:read': 'View card information',
  'cards:write': 'Issue and manage cards',
  'webhooks:manage': 'Register and manage webhook endpoints',
  'payment-controls:manage': 'Read and change the approval rules and limits of payments',
  'transactions:approve': 'Approve or reject transfers that wait for approval',
};

/** A scope parameter or claim (RFC 6749 3.3: space-delimited) as a list without repeats. */
export const splitScopes = (value: string | undefined): string[] => [
  ...new Set((value ?? '').split(' ').filter((scope) => scope !== '')),
];
