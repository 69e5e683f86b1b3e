import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { canonicalJson } from '../commons/canonical-json.ts';
import { compareCheckNumbers } from '../commons/check-number.ts';
import { compareDecimals } from '../commons/decimal.ts';
import { limitOf, pagingParameters, parseQuery } from '../commons/query-parameters.ts';
import { boundedText, optionalField, patternLength } from '../commons/text.ts';
import {
  accountIdSchema,
  amountSchema,
  type CreditTransferStatus,
  creditTransferStatusSchema,
  paymentIdSchema,
} from './credit-transfer.ts';
import type { ListEntry } from './list-entry.ts';

export { CURSOR_MAX_LENGTH, DEFAULT_LIMIT, MAX_LIMIT } from '../commons/query-parameters.ts';
export * from './list-entry.ts';

const dateSchema = z.iso.date().check(patternLength('YYYY-MM-DD'.length));
/** Check fields are nested free text (ISO 20022 Max140Text), see credit-transfer.ts. */
const checkTextSchema = boundedText(1, 140);

/** Query parameters of the list operation (spec 4.1): the source of validation and of the OpenAPI document. */
export const listCreditTransfersQuerySchema = z.strictObject({
  'paymentId.eq': optionalField(paymentIdSchema, 'Only the transfer with this paymentId.'),
  'status.eq': optionalField(
    creditTransferStatusSchema,
    'Only transfers whose current status is this one (e.g. Rejected).',
  ),
  'paymentMethod.eq': optionalField(
    boundedText(1, 35),
    'Only transfers with exactly this paymentMethod (case-sensitive).',
  ),
  'debtorAccountId.eq': optionalField(accountIdSchema, 'Only transfers from this debtor account.'),
  'creditorAccountNumber.eq': optionalField(
    boundedText(1, 30),
    'Only transfers whose `creditor.account.accountNumber` is exactly this BBAN (bank code, branch and account number).',
  ),
  'creditorAccountId.eq': optionalField(accountIdSchema, 'Only transfers to this creditor account.'),
  'checkType.eq': optionalField(checkTextSchema, 'Only transfers whose `check.checkType` is exactly this.'),
  'checkNumber.eq': optionalField(
    checkTextSchema,
    'Only transfers whose `check.checkNumber` equals this (digit strings by value: 000123 equals 123).',
  ),
  'amount.lte': optionalField(amountSchema, 'Only transfers whose `amount` is at most this (exact decimal).'),
  'amount.gte': optionalField(
    amountSchema,
    'Only transfers whose `amount` is at least this (exact decimal).',
  ),
  'checkDate.lte': optionalField(
    dateSchema,
    'Only transfers whose `check.availabilityDate`, as a UTC date, is on or before this date.',
  ),
  'checkDate.gte': optionalField(
    dateSchema,
    'Only transfers whose `check.availabilityDate`, as a UTC date, is on or after this date.',
  ),
  'checkNumber.lte': optionalField(
    checkTextSchema,
    'Only check numbers up to this one: by value when both are digit strings, otherwise in ordinal string order.',
  ),
  'checkNumber.gte': optionalField(
    checkTextSchema,
    'Only check numbers from this one: by value when both are digit strings, otherwise in ordinal string order.',
  ),
  'endToEndId.eq': optionalField(
    boundedText(1, 140),
    "Only transfers with this end-to-end id: a pain.001's `PmtId/EndToEndId`, or the identifier of scheme `EndToEndId`.",
  ),
  'instructionId.eq': optionalField(
    boundedText(1, 140),
    "Only transfers with this instruction id: a pain.001's `PmtId/InstrId`, or the identifier of scheme `InstrId`.",
  ),
  'batchId.eq': optionalField(
    z.string().check(z.regex(/^[0-9a-f-]{36}$/), z.length(36)),
    'Only the transfers of this batch.',
  ),
  ...pagingParameters('transfers'),
});

export type ListQuery = z.infer<typeof listCreditTransfersQuerySchema>;
/** Every filter of a list request; all given ones must hold (AND). */
export type ListFilters = Omit<ListQuery, 'cursor' | 'limit'>;

export interface ParsedListQuery {
  filters: ListFilters;
  cursor?: string;
  limit: number;
}

/**
 * Parses the query string, given as every value of every parameter (a parameter sent twice has
 * two values). Unknown and repeated parameters are refused, not ignored: a misspelt filter that
 * is dropped silently answers with transfers the client did not ask for.
 */
export const parseListQuery = (parameters: Readonly<Record<string, readonly string[]>>): ParsedListQuery => {
  const { cursor, limit, ...filters } = parseQuery(listCreditTransfersQuerySchema, parameters);
  return { filters, ...(cursor !== undefined && { cursor }), limit: limitOf(limit) };
};

/** Names the filter set: a cursor is bound to it, so it cannot continue a list filtered otherwise. */
export const filtersFingerprint = (filters: ListFilters): string =>
  createHash('sha256').update(canonicalJson(filters)).digest('base64url').slice(0, 22);

const equalTo = (wanted: string | undefined, value: string | undefined): boolean =>
  wanted === undefined || value === wanted;

const within = (
  value: string | undefined,
  lowest: string | undefined,
  highest: string | undefined,
  compare: (a: string, b: string) => number,
): boolean => {
  if (lowest === undefined && highest === undefined) return true;
  if (value === undefined) return false;
  return (
    (lowest === undefined || compare(value, lowest) >= 0) &&
    (highest === undefined || compare(value, highest) <= 0)
  );
};

const compareDates = (a: string, b: string): number => (a === b ? 0 : a < b ? -1 : 1);

/** True when the transfer passes every filter given; `paymentId.eq` is the caller's to apply (it is a key). */
export const matchesListFilters = (entry: ListEntry, filters: ListFilters): boolean =>
  equalTo(filters['paymentMethod.eq'], entry.paymentMethod) &&
  equalTo(filters['debtorAccountId.eq'], entry.debtorAccountId) &&
  equalTo(filters['creditorAccountId.eq'], entry.creditorAccountId) &&
  equalTo(filters['creditorAccountNumber.eq'], entry.creditorAccountNumber) &&
  equalTo(filters['checkType.eq'], entry.checkType) &&
  within(entry.checkNumber, filters['checkNumber.eq'], filters['checkNumber.eq'], compareCheckNumbers) &&
  within(entry.checkNumber, filters['checkNumber.gte'], filters['checkNumber.lte'], compareCheckNumbers) &&
  within(entry.amount, filters['amount.gte'], filters['amount.lte'], compareDecimals) &&
  within(entry.checkDate, filters['checkDate.gte'], filters['checkDate.lte'], compareDates) &&
  equalTo(filters['endToEndId.eq'], entry.endToEndId) &&
  equalTo(filters['instructionId.eq'], entry.instructionId) &&
  equalTo(filters['batchId.eq'], entry.batchId);

/**
 * `status.eq`, checked against a transfer's status as read from the table. Status is not part of
 * the list entry (it changes; the entry does not): the status index selects by it, and this check
 * drops a transfer whose status moved on after the index entry was read.
 */
export const matchesStatusFilter = (status: CreditTransferStatus, filters: ListFilters): boolean =>
  filters['status.eq'] === undefined || filters['status.eq'] === status;
