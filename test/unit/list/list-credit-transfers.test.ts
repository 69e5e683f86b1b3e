import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '#domain/commons/errors';
import type { CreditTransferRequest } from '#domain/credit-transfers/credit-transfer';
import {
  type CreditTransferList,
  type ListDependencies,
  type ListPageRequest,
  listCreditTransfers,
} from '#domain/credit-transfers/list-credit-transfers';
import type { CreditTransferRecord, CreditTransferStore } from '#domain/credit-transfers/ports';

const record = (paymentId: string, createdAt: string, transfer: Partial<CreditTransferRequest> = {}) =>
  ({
    tenant: 'tenant-a',
    paymentId,
    clientId: 'client',
    createdAt,
    status: 'Received',
    statusDate: createdAt,
    requestHash: 'hash',
    servicer: {},
    transfer: { paymentMethod: 'CreditTransfer', amount: '10.00', debtorAccountId: 'debtor-1', ...transfer },
    history: [],
  }) satisfies CreditTransferRecord;

const RECORDS = [
  record('p-3', '2026-03-03T00:00:00.000Z'),
  record('p-2', '2026-03-02T00:00:00.000Z', { amount: '20.00' }),
  record('p-1', '2026-03-01T00:00:00.000Z'),
];

/** A list over RECORDS (already newest first) that pages by position and records what it was asked. */
const fakeList = (requests: ListPageRequest[]): CreditTransferList => ({
  page: async (request) => {
    requests.push(request);
    const start = request.after ? RECORDS.findIndex((r) => r.paymentId === request.after?.paymentId) + 1 : 0;
    const records = RECORDS.slice(start, start + request.limit);
    const last = records.at(-1);
    const more = start + request.limit < RECORDS.length;
    return {
      records,
      ...(more && last && { next: { createdAt: last.createdAt, paymentId: last.paymentId } }),
      ...(request.withTotal && { total: RECORDS.length }),
    };
  },
});

const store = (records: CreditTransferRecord[]): CreditTransferStore => ({
  create: async () => true,
  get: async (tenant, paymentId) => records.find((r) => r.tenant === tenant && r.paymentId === paymentId),
});

const key = randomBytes(32);
const dependencies = (requests: ListPageRequest[] = []): ListDependencies => ({
  store: store(RECORDS),
  list: fakeList(requests),
  cursorKey: async () => key,
});

const query = (parameters: Record<string, string>) =>
  Object.fromEntries(Object.entries(parameters).map(([name, value]) => [name, [value]]));

describe('listCreditTransfers', () => {
  it('counts on the first page only and carries the total in the cursor', async () => {
    const requests: ListPageRequest[] = [];
    const first = await listCreditTransfers(dependencies(requests), {
      tenant: 'tenant-a',
      parameters: query({ limit: '2' }),
    });
    expect(first.creditTransfers.map((t) => t.paymentId)).toEqual(['p-3', 'p-2']);
    expect(first.total).toBe('3');
    expect(first.nextCursor).not.toBe('');

    const second = await listCreditTransfers(dependencies(requests), {
      tenant: 'tenant-a',
      parameters: query({ limit: '2', cursor: first.nextCursor }),
    });
    expect(second.creditTransfers.map((t) => t.paymentId)).toEqual(['p-1']);
    expect(second.total).toBe('3');
    expect(second.nextCursor).toBe('');
    expect(requests.map((r) => r.withTotal)).toEqual([true, false]);
    expect(requests[1]?.after).toEqual({ createdAt: RECORDS[1]?.createdAt, paymentId: 'p-2' });
  });

  it('lets the page size change from one page to the next', async () => {
    const first = await listCreditTransfers(dependencies(), {
      tenant: 'tenant-a',
      parameters: query({ limit: '1' }),
    });
    const rest = await listCreditTransfers(dependencies(), {
      tenant: 'tenant-a',
      parameters: query({ limit: '100', cursor: first.nextCursor }),
    });
    expect(rest.creditTransfers.map((t) => t.paymentId)).toEqual(['p-2', 'p-1']);
  });

  it('refuses a cursor with other filters, or from another tenant, before reading anything', async () => {
    const requests: ListPageRequest[] = [];
    const first = await listCreditTransfers(dependencies(requests), {
      tenant: 'tenant-a',
      parameters: query({ limit: '1' }),
    });
    for (const [tenant, parameters] of [
      ['tenant-a', query({ limit: '1', cursor: first.nextCursor, 'amount.gte': '1' })],
      ['tenant-b', query({ limit: '1', cursor: first.nextCursor })],
    ] as const) {
      const refused = listCreditTransfers(dependencies(requests), { tenant, parameters });
      await expect(refused).rejects.toBeInstanceOf(InvalidRequestError);
      await expect(refused).rejects.toMatchObject({ invalidParams: [{ name: 'cursor' }] });
    }
    expect(requests).toHaveLength(1);
  });

  it('reports a total counted up to its bound as N+, on the first page and every later one', async () => {
    const bounded = (requests: ListPageRequest[]): ListDependencies => {
      const inner = fakeList(requests);
      return {
        ...dependencies(requests),
        list: {
          page: async (request) => ({
            ...(await inner.page(request)),
            ...(request.withTotal && { total: 2, totalIsLowerBound: true }),
          }),
        },
      };
    };
    const first = await listCreditTransfers(bounded([]), {
      tenant: 'tenant-a',
      parameters: query({ limit: '1' }),
    });
    expect(first.total).toBe('2+');
    const second = await listCreditTransfers(bounded([]), {
      tenant: 'tenant-a',
      parameters: query({ limit: '1', cursor: first.nextCursor }),
    });
    expect(second.total).toBe('2+');
  });

  it('answers paymentId.eq with one read of that transfer and no cursor, applying the other filters', async () => {
    const requests: ListPageRequest[] = [];
    const found = await listCreditTransfers(dependencies(requests), {
      tenant: 'tenant-a',
      parameters: query({ 'paymentId.eq': 'p-2', 'amount.gte': '20' }),
    });
    expect(found).toMatchObject({
      total: '1',
      nextCursor: '',
      creditTransfers: [{ paymentId: 'p-2', amount: '20.00' }],
    });

    const filteredOut = await listCreditTransfers(dependencies(requests), {
      tenant: 'tenant-a',
      parameters: query({ 'paymentId.eq': 'p-2', 'amount.gte': '20.00000001' }),
    });
    expect(filteredOut).toEqual({ total: '0', nextCursor: '', creditTransfers: [] });

    const byStatus = (status: string) =>
      listCreditTransfers(dependencies(requests), {
        tenant: 'tenant-a',
        parameters: query({ 'paymentId.eq': 'p-2', 'status.eq': status }),
      });
    expect((await byStatus('Received')).creditTransfers).toHaveLength(1);
    expect(await byStatus('Rejected')).toEqual({ total: '0', nextCursor: '', creditTransfers: [] });

    const otherTenant = await listCreditTransfers(dependencies(requests), {
      tenant: 'tenant-b',
      parameters: query({ 'paymentId.eq': 'p-2' }),
    });
    expect(otherTenant.creditTransfers).toEqual([]);
    expect(requests).toHaveLength(0);
  });

  it('returns each transfer as the status operation shows it', async () => {
    const { creditTransfers } = await listCreditTransfers(dependencies(), {
      tenant: 'tenant-a',
      parameters: {},
    });
    expect(creditTransfers[0]).toEqual({
      paymentMethod: 'CreditTransfer',
      amount: '10.00',
      debtorAccountId: 'debtor-1',
      paymentId: 'p-3',
      status: 'Received',
      date: '2026-03-03T00:00:00.000Z',
    });
  });
});
