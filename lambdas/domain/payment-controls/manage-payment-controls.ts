import * as z from 'zod/mini';
import {
  InvalidRequestError,
  PreconditionFailedError,
  PreconditionRequiredError,
} from '../commons/errors.ts';
import type { Clock } from '../commons/ports.ts';
import { parseQuery } from '../commons/query-parameters.ts';
import { patternLength } from '../commons/text.ts';
import { parseOrThrow } from '../commons/validation.ts';
import {
  EMPTY_PAYMENT_CONTROLS,
  type PaymentControls,
  paymentControlsSchema,
  paymentControlsViolations,
} from './payment-controls.ts';
import type { PaymentControlsStore, PaymentControlsVersion } from './ports.ts';

/** The payment controls operations (scope payment-controls:manage), each on the caller's tenant only. */
export interface PaymentControlsDependencies {
  controls: PaymentControlsStore;
  clock: Clock;
}

/** The strong entity tag of a version; version 0 is the empty document before the first change. */
export const entityTagOf = (version: number): string => `"${version}"`;

export interface CurrentControls {
  controls: PaymentControls;
  etag: string;
}

export const getPaymentControls = async (
  { controls }: PaymentControlsDependencies,
  tenant: string,
): Promise<CurrentControls> => {
  const current = await controls.current(tenant);
  return current === undefined
    ? { controls: EMPTY_PAYMENT_CONTROLS, etag: entityTagOf(0) }
    : { controls: current.controls, etag: entityTagOf(current.version) };
};

/**
 * The entity tags an If-Match header names (RFC 9110 13.1.1): a list of strong tags, or `*`.
 * Weak tags never match: the comparison for a change is the strong one.
 */
const matches = (ifMatch: string, etag: string, exists: boolean): boolean => {
  if (ifMatch.trim() === '*') return exists;
  return ifMatch
    .split(',')
    .map((tag) => tag.trim())
    .includes(etag);
};

export interface ChangeCommand {
  tenant: string;
  clientId: string;
  body: unknown;
  ifMatch?: string;
}

/**
 * Stores a new version when the body is a valid document and If-Match names the current one
 * (which the first change may leave out). Two changes from the same version: one wins, the
 * other is answered 412, as a stale tag is.
 */
export const putPaymentControls = async (
  { controls, clock }: PaymentControlsDependencies,
  { tenant, clientId, body, ifMatch }: ChangeCommand,
): Promise<CurrentControls> => {
  const document = parseOrThrow(paymentControlsSchema, body, 'The payment controls are not valid');
  const violations = paymentControlsViolations(document);
  if (violations.length > 0) throw new InvalidRequestError('The payment controls are not valid', violations);
  const current = await controls.current(tenant);
  const version = current?.version ?? 0;
  if (ifMatch === undefined) {
    if (current !== undefined) {
      throw new PreconditionRequiredError(
        'Send If-Match with the ETag of the payment controls you changed (GET /v1/payment-controls)',
      );
    }
  } else if (!matches(ifMatch, entityTagOf(version), current !== undefined)) {
    throw new PreconditionFailedError(
      `The payment controls changed since that ETag; the current one is ${entityTagOf(version)}`,
    );
  }
  const next: PaymentControlsVersion = {
    version: version + 1,
    controls: document,
    clientId,
    createdAt: clock.now().toISOString(),
  };
  if (!(await controls.add(tenant, next))) {
    throw new PreconditionFailedError('The payment controls were changed by another request meanwhile');
  }
  return { controls: document, etag: entityTagOf(next.version) };
};

export const MAX_VERSIONS_PAGE = 100;

export const listVersionsQuerySchema = z.strictObject({
  before: z.optional(
    z
      .string()
      .check(
        z.regex(/^[1-9][0-9]{0,8}$/, 'must be a version number (a whole number from 1)'),
        patternLength(9),
      ),
  ),
});

export interface VersionView {
  version: number;
  etag: string;
  clientId: string;
  createdAt: string;
  controls: PaymentControls;
}

/** Every version, newest first, MAX_VERSIONS_PAGE at a time (the next page: `before` the last one's number). */
export const listPaymentControlsVersions = async (
  { controls }: PaymentControlsDependencies,
  tenant: string,
  parameters: Readonly<Record<string, readonly string[]>>,
): Promise<VersionView[]> => {
  const { before } = parseQuery(listVersionsQuerySchema, parameters);
  const versions = await controls.list(tenant, {
    ...(before !== undefined && { before: Number(before) }),
    limit: MAX_VERSIONS_PAGE,
  });
  return versions.map((entry) => ({
    version: entry.version,
    etag: entityTagOf(entry.version),
    clientId: entry.clientId,
    createdAt: entry.createdAt,
    controls: entry.controls,
  }));
};
