import { type ListPosition, signCursor, verifyCursor } from '../commons/cursor.ts';
import type { CreditTransfer } from './credit-transfer.ts';
import { toCreditTransfer } from './credit-transfer-view.ts';
import {
  filtersFingerprint,
  type ListFilters,
  listEntryOf,
  matchesListFilters,
  matchesStatusFilter,
  parseListQuery,
} from './list-filters.ts';
import type { CreditTransferRecord, CreditTransferStore } from './ports.ts';

export interface ListPageRequest {
  tenant: string;
  filters: ListFilters;
  /** Continue strictly after this position; absent on the first page. */
  after?: ListPosition;
  limit: number;
  /** Count every match (Pagination-Total); only the first page needs it. */
  withTotal: boolean;
}

export interface ListPage {
  /** Up to `limit` matching transfers, newest first (ties by paymentId, descending). */
  records: CreditTransferRecord[];
  /** Where the next page starts; absent when nothing can follow. */
  next?: ListPosition;
  /** Matches when paging began, when `withTotal` was asked for. */
  total?: number;
  /** The count stopped at its bound: at least `total` transfers match. */
  totalIsLowerBound?: boolean;
}

/** Reads pages of a tenant's transfers, newest first, filtered; never another tenant's. */
export interface CreditTransferList {
  page(request: ListPageRequest): Promise<ListPage>;
}

export interface ListDependencies {
  store: CreditTransferStore;
  list: CreditTransferList;
  /** The secret that signs cursors, loaded once. */
  cursorKey: () => Promise<Uint8Array>;
}

export interface ListCommand {
  tenant: string;
  /** Every value of every query parameter. */
  parameters: Readonly<Record<string, readonly string[]>>;
}

export interface ListResult {
  creditTransfers: CreditTransfer[];
  /** Pagination-Cursor: empty on the last page. */
  nextCursor: string;
  /**
   * Pagination-Total: the matches when paging began, in digits; `N+` when counting stopped at its
   * bound and at least N match.
   */
  total: string;
}

const paginationTotal = (total: number, atLeast: boolean | undefined): string =>
  atLeast ? `${total}+` : String(total);

/** `paymentId.eq` names at most one transfer: one strongly consistent read, then the other filters. */
const listById = async (
  store: CreditTransferStore,
  tenant: string,
  paymentId: string,
  filters: ListFilters,
) => {
  const record = await store.get(tenant, paymentId);
  const matches =
    record !== undefined &&
    matchesStatusFilter(record.status, filters) &&
    matchesListFilters(listEntryOf(record), filters);
  return matches ? [record] : [];
};

export const listCreditTransfers = async (
  { store, list, cursorKey }: ListDependencies,
  { tenant, parameters }: ListCommand,
): Promise<ListResult> => {
  const { filters, cursor, limit } = parseListQuery(parameters);
  const fingerprint = filtersFingerprint(filters);
  const resumed =
    cursor === undefined ? undefined : verifyCursor(await cursorKey(), tenant, cursor, fingerprint);

  const paymentId = filters['paymentId.eq'];
  if (paymentId !== undefined) {
    // A one-transfer answer is always its only page, so no cursor is ever issued for it.
    const records = await listById(store, tenant, paymentId, filters);
    return { creditTransfers: records.map(toCreditTransfer), nextCursor: '', total: String(records.length) };
  }

  const page = await list.page({
    tenant,
    filters,
    ...(resumed && { after: resumed.after }),
    limit,
    withTotal: resumed === undefined,
  });
  const total = resumed?.total ?? page.total;
  const atLeast = resumed ? resumed.totalIsLowerBound : page.totalIsLowerBound;
  if (total === undefined) throw new Error('The first page of a list came without its total');
  const nextCursor =
    page.next === undefined
      ? ''
      : signCursor(await cursorKey(), tenant, {
          after: page.next,
          total,
          ...(atLeast && { totalIsLowerBound: true }),
          filters: fingerprint,
        });
  return {
    creditTransfers: page.records.map(toCreditTransfer),
    nextCursor,
    total: paginationTotal(total, atLeast),
  };
};
