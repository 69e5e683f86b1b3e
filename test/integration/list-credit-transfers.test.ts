import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import { registerClient } from '#domain/access/register-client';
import type { CreditTransferRequest } from '#domain/credit-transfers/credit-transfer';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, type JsonReply, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

type Filters = Partial<Record<string, string>>;

const TRANSFERS = '/v1/payments/credit-transfers';
const TABLE = 'credit-transfers';
const SECRET = 'list-test-secret-0123456789';

const service = useLocalService();
let store: DynamoDbCreditTransferStore;
let clients: DynamoDbClientStore;

beforeAll(() => {
  store = new DynamoDbCreditTransferStore(service.table, TABLE);
  clients = new DynamoDbClientStore(service.table, TABLE);
});

/** A fresh tenant with a client of its own, so runs never see each other's transfers. */
const newTenant = async (scope = 'transactions:read transactions:write') => {
  const tenant = `t-${randomUUID().slice(0, 8)}`;
  const clientId = `list-${tenant}`;
  await registerClient(clients, { clientId, secret: SECRET, scopes: scope.split(' '), tenant });
  return { tenant, token: await requestToken(service.baseUrl, scope, { clientId, clientSecret: SECRET }) };
};

const list = (token: string, parameters: Filters | [string, string][] = {}): Promise<JsonReply> => {
  const entries = Array.isArray(parameters)
    ? parameters
    : Object.entries(parameters).flatMap(([name, value]): [string, string][] =>
        value === undefined ? [] : [[name, value]],
      );
  const query = new URLSearchParams(entries).toString();
  return callApi(service.baseUrl, `${TRANSFERS}${query ? `?${query}` : ''}`, { token });
};

const record = (tenant: string, createdAt: Date, transfer: CreditTransferRequest): CreditTransferRecord => ({
  tenant,
  paymentId: randomUUID(),
  clientId: 'list-test',
  createdAt: createdAt.toISOString(),
  status: 'Received',
  statusDate: createdAt.toISOString(),
  requestHash: 'hash',
  servicer: {},
  transfer,
  history: [{ status: 'Received', date: createdAt.toISOString(), actor: 'list-test' }],
});

/** The list element of a stored transfer: the status operation's view. */
const viewOf = (stored: CreditTransferRecord) => ({
  ...stored.transfer,
  paymentId: stored.paymentId,
  status: stored.status,
  date: stored.statusDate,
});

// ---------------------------------------------------------------------------------------------
// The model: the documented filter semantics, written independently of the service's code.

const scaledAmount = (amount: string): bigint => {
  const negative = amount.startsWith('-');
  const [integer = '', fraction = ''] = amount.replace('-', '').split('.');
  const magnitude = BigInt(integer + fraction.padEnd(8, '0'));
  return negative ? -magnitude : magnitude;
};
const compareAmounts = (a: string, b: string) => Number(scaledAmount(a) - scaledAmount(b));
const compareCheckNumbers = (a: string, b: string) =>
  /^\d+$/.test(a) && /^\d+$/.test(b) ? Number(BigInt(a) - BigInt(b)) : a === b ? 0 : a < b ? -1 : 1;
const utcDate = (dateTime: string) => new Date(dateTime).toISOString().slice(0, 10);

const matches = (transfer: CreditTransferRequest, f: Filters): boolean => {
  const check = transfer.check;
  const inRange = <T>(
    value: T | undefined,
    low: T | undefined,
    high: T | undefined,
    cmp: (a: T, b: T) => number,
  ) =>
    (low === undefined && high === undefined) ||
    (value !== undefined &&
      (low === undefined || cmp(value, low) >= 0) &&
      (high === undefined || cmp(value, high) <= 0));
  const equal = (wanted: string | undefined, value: string | undefined) =>
    wanted === undefined || wanted === value;
  return (
    equal(f['paymentMethod.eq'], transfer.paymentMethod) &&
    equal(f['debtorAccountId.eq'], transfer.debtorAccountId) &&
    equal(f['creditorAccountId.eq'], transfer.creditorAccountId) &&
    equal(f['creditorAccountNumber.eq'], transfer.creditor?.account?.accountNumber) &&
    equal(f['checkType.eq'], check?.checkType) &&
    inRange(check?.checkNumber, f['checkNumber.eq'], f['checkNumber.eq'], compareCheckNumbers) &&
    inRange(check?.checkNumber, f['checkNumber.gte'], f['checkNumber.lte'], compareCheckNumbers) &&
    inRange(transfer.amount, f['amount.gte'], f['amount.lte'], compareAmounts) &&
    inRange(
      check?.availabilityDate === undefined ? undefined : utcDate(check.availabilityDate),
      f['checkDate.gte'],
      f['checkDate.lte'],
      (a: string, b: string) => (a === b ? 0 : a < b ? -1 : 1),
    )
  );
};

/** Newest first by initiation time, ties by paymentId descending. */
const listOrder = (a: CreditTransferRecord, b: CreditTransferRecord) =>
  a.createdAt !== b.createdAt
    ? a.createdAt < b.createdAt
      ? 1
      : -1
    : a.paymentId === b.paymentId
      ? 0
      : a.paymentId < b.paymentId
        ? 1
        : -1;

const expectedList = (stored: CreditTransferRecord[], filters: Filters) =>
  stored
    .filter(
      (r) =>
        (filters['paymentId.eq'] === undefined || r.paymentId === filters['paymentId.eq']) &&
        (filters['status.eq'] === undefined || r.status === filters['status.eq']) &&
        matches(r.transfer, filters),
    )
    .sort(listOrder);

// ---------------------------------------------------------------------------------------------
// Generators: small pools, so filters hit and createdAt ties are common.

const DEBTORS = ['d-1', 'd-2', 'd-3'];
const STATUSES = ['Received', 'AcceptedSettlementInProcess', 'Rejected', 'Cancelled'] as const;
const CREDITOR_IDS = ['c-1', 'c-2'];
const CREDITOR_NUMBERS = ['021000021-0001', '021000021-0002'];
const METHODS = ['CreditTransfer', 'Check', 'ACH'];
const CHECK_TYPES = ['BusinessCheck', 'ECheck'];
const CHECK_NUMBERS = ['7', '007', '10', '0099', '100', 'A1', 'a1', 'B-2', '10A'];
const AMOUNTS = [
  '0',
  '-0',
  '5.',
  '5',
  '5.00000001',
  '4.99999999',
  '-5.5',
  '125.50',
  '0.1',
  '9999999999999.99999999',
  '-9999999999999.99999999',
];
const DATE_TIMES = [
  '2026-01-01T00:30:00+01:00',
  '2026-01-01T12:00:00Z',
  '2026-01-01T23:30:00-01:00',
  '2026-01-02T00:00:00.000Z',
  '2026-01-03T09:15:00.123456+05:30',
];
const DATES = ['2025-12-31', '2026-01-01', '2026-01-02', '2026-01-03'];

const amountArbitrary = fc.oneof(
  fc.constantFrom(...AMOUNTS),
  fc
    .tuple(
      fc.boolean(),
      fc.bigInt({ min: 0n, max: 10n ** 13n - 1n }),
      fc.option(fc.nat({ max: 99_999_999 }), { nil: undefined }),
    )
    .map(
      ([negative, integer, fraction]) =>
        `${negative ? '-' : ''}${integer}${fraction === undefined ? '' : `.${String(fraction).padStart(8, '0').replace(/0+$/, '')}`}`,
    ),
);

const transferArbitrary: fc.Arbitrary<CreditTransferRequest> = fc
  .record(
    {
      paymentMethod: fc.constantFrom(...METHODS),
      amount: amountArbitrary,
      debtorAccountId: fc.constantFrom(...DEBTORS),
      creditorAccountId: fc.constantFrom(...CREDITOR_IDS),
      accountNumber: fc.constantFrom(...CREDITOR_NUMBERS),
      check: fc.record(
        {
          checkType: fc.constantFrom(...CHECK_TYPES),
          checkNumber: fc.constantFrom(...CHECK_NUMBERS),
          availabilityDate: fc.constantFrom(...DATE_TIMES),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['paymentMethod', 'amount', 'debtorAccountId'] },
  )
  .map(({ accountNumber, ...transfer }) => ({
    ...transfer,
    ...(accountNumber !== undefined && { creditor: { account: { accountNumber } } }),
  }));

const FILTER_VALUES: Record<string, fc.Arbitrary<string>> = {
  'status.eq': fc.constantFrom(...STATUSES),
  'paymentMethod.eq': fc.constantFrom(...METHODS),
  'debtorAccountId.eq': fc.constantFrom(...DEBTORS),
  'creditorAccountId.eq': fc.constantFrom(...CREDITOR_IDS),
  'creditorAccountNumber.eq': fc.constantFrom(...CREDITOR_NUMBERS),
  'checkType.eq': fc.constantFrom(...CHECK_TYPES),
  'checkNumber.eq': fc.constantFrom(...CHECK_NUMBERS),
  'checkNumber.gte': fc.constantFrom(...CHECK_NUMBERS),
  'checkNumber.lte': fc.constantFrom(...CHECK_NUMBERS),
  // A stored amount may be `5.` (accepted before amounts had to end in a digit); a filter may not.
  'amount.gte': amountArbitrary.filter((amount) => !amount.endsWith('.')),
  'amount.lte': amountArbitrary.filter((amount) => !amount.endsWith('.')),
  'checkDate.gte': fc.constantFrom(...DATES),
  'checkDate.lte': fc.constantFrom(...DATES),
};

/** Zero to three filters, so that most combinations still match something. */
const filtersArbitrary: fc.Arbitrary<Filters> = fc
  .uniqueArray(fc.constantFrom(...Object.keys(FILTER_VALUES)), { maxLength: 3 })
  .chain((names) =>
    fc.record(Object.fromEntries(names.map((name) => [name, FILTER_VALUES[name] ?? fc.constant('')]))),
  );

interface PagedList {
  items: { paymentId: string }[];
  pages: JsonReply[];
}

/** Pages through with `limit`, calling `between` after the first page. */
const pageThrough = async (
  token: string,
  filters: Filters,
  limit: number,
  between: () => Promise<void> = async () => {},
): Promise<PagedList> => {
  const pages: JsonReply[] = [];
  let cursor = '';
  do {
    const reply = await list(token, {
      ...(filters as Record<string, string>),
      limit: String(limit),
      ...(cursor && { cursor }),
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    pages.push(reply);
    cursor = reply.headers.get('pagination-cursor') ?? 'missing';
    if (pages.length === 1) await between();
    expect(pages.length).toBeLessThan(200);
  } while (cursor !== '');
  return { items: pages.flatMap((page) => page.body), pages };
};

describe('listing credit transfers', () => {
  it('pages through exactly what filtering the same transfers in memory gives, in order, while new ones arrive', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(transferArbitrary, fc.nat({ max: 12 }), fc.constantFrom(...STATUSES)), {
          maxLength: 24,
        }),
        filtersArbitrary,
        // Now and then one transfer by id (paymentId.eq), with the other filters on top.
        fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() }),
        fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min: 1, max: 6 }) },
          { weight: 1, arbitrary: fc.constant(100) },
        ),
        fc.array(transferArbitrary, { maxLength: 3 }),
        async (transfers, filters, byId, limit, arrivals) => {
          const { tenant, token } = await newTenant('transactions:read');
          const start = Date.now() - 60_000;
          const stored = transfers.map(([transfer, offset, status]) => ({
            ...record(tenant, new Date(start + offset), transfer),
            status,
          }));
          await Promise.all(stored.map((r) => store.create(r)));
          const chosen: Filters = { ...filters };
          if (byId !== undefined)
            chosen['paymentId.eq'] = stored[byId % Math.max(stored.length, 1)]?.paymentId ?? randomUUID();

          // New payments arriving while the client pages are newer than the first page: never listed.
          const arrive = async () => {
            await Promise.all(arrivals.map((transfer) => store.create(record(tenant, new Date(), transfer))));
          };
          const { items, pages } = await pageThrough(token, chosen, limit, arrive);

          const expected = expectedList(stored, chosen);
          expect(items).toEqual(expected.map(viewOf));
          expect(new Set(items.map((item) => item.paymentId)).size).toBe(items.length);
          for (const page of pages) {
            expect(page.body.length).toBeLessThanOrEqual(limit);
            expect(page.headers.get('pagination-total')).toBe(String(expected.length));
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it('status.eq follows each transfer through its lifecycle: listed under its current status only', async () => {
    const { token } = await newTenant();
    const initiate = async (debtorAccountId: string) => {
      const reply = await callApi(service.baseUrl, TRANSFERS, {
        token,
        body: minimalCreditTransfer({ debtorAccountId }),
      });
      expect(reply.status).toBe(202);
      return reply.body.paymentId as string;
    };
    const settled = await initiate('acc-status');
    const rejected = [await initiate('acc-status-blocked'), await initiate('acc-status-closed')];
    const finalStatus = async (paymentId: string) => {
      for (let attempt = 0; attempt < 300; attempt++) {
        const reply = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token });
        if (['AcceptedSettlementCompleted', 'Rejected', 'Cancelled'].includes(reply.body.status))
          return reply.body.status as string;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`${paymentId} did not reach a final status`);
    };
    expect(await finalStatus(settled)).toBe('AcceptedSettlementCompleted');
    for (const paymentId of rejected) expect(await finalStatus(paymentId)).toBe('Rejected');

    const ids = async (filters: Filters) =>
      (await pageThrough(token, filters, 1)).items.map((item) => item.paymentId);
    expect(await ids({ 'status.eq': 'Received' })).toEqual([]);
    expect(await ids({ 'status.eq': 'AcceptedCustomerProfile' })).toEqual([]);
    expect(await ids({ 'status.eq': 'AcceptedSettlementCompleted' })).toEqual([settled]);
    const { items, pages } = await pageThrough(token, { 'status.eq': 'Rejected' }, 1);
    expect(items.map((item) => item.paymentId)).toEqual([...rejected].reverse());
    expect(pages.map((page) => page.headers.get('pagination-total'))).toEqual(['2', '2']);
    expect(await ids({ 'status.eq': 'Rejected', 'debtorAccountId.eq': 'acc-status-blocked' })).toEqual([
      rejected[0],
    ]);
    expect(await ids({ 'status.eq': 'Rejected', 'paymentId.eq': settled })).toEqual([]);
  });

  it('lists transfers made through the initiation operation, with the headers on every page', async () => {
    const { token } = await newTenant();
    const made: string[] = [];
    for (const amount of ['1.00', '2.00', '3.00']) {
      const reply = await callApi(service.baseUrl, TRANSFERS, {
        token,
        body: minimalCreditTransfer({ amount, debtorAccountId: 'acc-http' }),
      });
      expect(reply.status).toBe(202);
      made.unshift(reply.body.paymentId);
    }
    const { items, pages } = await pageThrough(token, { 'debtorAccountId.eq': 'acc-http' }, 2);
    expect(items.map((item) => item.paymentId)).toEqual(made);
    expect(
      pages.map((page) => [
        page.headers.get('pagination-total'),
        page.headers.get('pagination-cursor') === '',
      ]),
    ).toEqual([
      ['3', false],
      ['3', true],
    ]);

    const empty = await list(token, { 'debtorAccountId.eq': 'nobody' });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);
    expect(empty.headers.get('pagination-total')).toBe('0');
    expect(empty.headers.get('pagination-cursor')).toBe('');
    expect(empty.headers.get('content-type')).toContain('application/json');
  });

  it('needs the transactions:read scope', async () => {
    const { token } = await newTenant('transactions:write');
    const reply = await list(token);
    expect(reply.status).toBe(403);
    expect(reply.body.error).toBe('insufficient_scope');
  });
});

describe('tenancy', () => {
  it("never shows another tenant's transfers, whatever the filters", async () => {
    const mine = await newTenant();
    const theirs = await newTenant();
    const transfer = {
      paymentMethod: 'Check',
      amount: '10.00',
      debtorAccountId: 'same-debtor',
      creditorAccountId: 'same-creditor',
      creditor: { account: { accountNumber: 'same-number' } },
      check: { checkType: 'BusinessCheck', checkNumber: '1', availabilityDate: '2026-01-01T00:00:00Z' },
    };
    const own = record(mine.tenant, new Date(), transfer);
    const foreign = record(theirs.tenant, new Date(), transfer);
    await Promise.all([store.create(own), store.create(foreign)]);

    for (const filters of [
      {},
      { 'debtorAccountId.eq': 'same-debtor' },
      { 'creditorAccountId.eq': 'same-creditor' },
      { 'creditorAccountNumber.eq': 'same-number' },
      {
        'paymentMethod.eq': 'Check',
        'amount.gte': '0',
        'checkNumber.eq': '1',
        'checkDate.gte': '2026-01-01',
      },
    ]) {
      const reply = await list(mine.token, filters);
      expect(
        reply.body.map((item: { paymentId: string }) => item.paymentId),
        JSON.stringify(filters),
      ).toEqual([own.paymentId]);
      expect(reply.headers.get('pagination-total')).toBe('1');
    }
    const byId = await list(mine.token, { 'paymentId.eq': foreign.paymentId });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual([]);
    expect(byId.headers.get('pagination-total')).toBe('0');
  });
});

describe('refused requests', () => {
  let token: string;
  let cursor: string;
  let tenant: string;

  beforeAll(async () => {
    ({ token, tenant } = await newTenant());
    await Promise.all(
      [1, 2, 3].map((n) =>
        store.create(record(tenant, new Date(Date.now() + n), minimalCreditTransfer({ amount: `${n}.00` }))),
      ),
    );
    cursor = (await list(token, { limit: '1', 'amount.gte': '1' })).headers.get('pagination-cursor') ?? '';
    expect(cursor).not.toBe('');
  });

  const expectRefused = (reply: JsonReply, name: string) => {
    expect(reply.status, JSON.stringify(reply.body)).toBe(400);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(reply.body.error).toBe('invalid_request');
    expect(reply.body.invalidParams.map((param: { name: string }) => param.name)).toEqual([name]);
  };

  it.each([
    'amount',
    'amount.eq',
    'status',
    'offset',
    'page',
    'sort',
    'Limit',
    'paymentid.eq',
    'checkDate.eq',
    'foo',
  ])('refuses the unknown parameter %s', async (name) => {
    expectRefused(await list(token, { [name]: '1' }), name);
  });

  it.each([
    ['limit', '5'],
    ['debtorAccountId.eq', 'd-1'],
    ['amount.gte', '1'],
  ])('refuses %s given twice', async (name, value) => {
    expectRefused(
      await list(token, [
        [name, value],
        [name, value],
      ]),
      name,
    );
  });

  it.each(['0', '101', 'abc', '1.5', '-1', ''])('refuses limit=%j', async (limit) => {
    expectRefused(await list(token, { limit }), 'limit');
  });

  it.each([
    ['amount.gte', '12.123456789'],
    ['amount.lte', '12345678901234'],
    ['amount.lte', '1e3'],
    ['amount.gte', '0012'],
    ['checkDate.gte', '2026-02-30'],
    ['checkDate.lte', '01/02/2026'],
    ['checkDate.lte', '2026-01-01T00:00:00Z'],
    ['creditorAccountNumber.eq', 'n'.repeat(31)],
    ['creditorAccountId.eq', 'c'.repeat(37)],
    ['status.eq', 'Settled'],
    ['status.eq', 'rejected'],
    ['status.eq', ''],
  ])('refuses %s=%j', async (name, value) => {
    expectRefused(await list(token, { [name]: value }), name);
  });

  it('accepts the cursor it issued, with the same filters', async () => {
    const reply = await list(token, { limit: '1', 'amount.gte': '1', cursor });
    expect(reply.status).toBe(200);
    expect(reply.body).toHaveLength(1);
  });

  it('refuses a cursor changed in its content or its signature', async () => {
    const [payload = '', signature = ''] = cursor.split('.');
    const flip = (text: string, index: number) =>
      `${text.slice(0, index)}${text[index] === 'A' ? 'B' : 'A'}${text.slice(index + 1)}`;
    for (const tampered of [
      `${flip(payload, 10)}.${signature}`,
      `${payload}.${flip(signature, 5)}`,
      `${payload}.`,
      'garbage',
    ]) {
      expectRefused(await list(token, { limit: '1', 'amount.gte': '1', cursor: tampered }), 'cursor');
    }
  });

  it("refuses another tenant's cursor", async () => {
    const other = await newTenant();
    expectRefused(await list(other.token, { limit: '1', 'amount.gte': '1', cursor }), 'cursor');
  });

  it('refuses a cursor sent with other filters', async () => {
    for (const filters of [
      {},
      { 'amount.gte': '2' },
      { 'amount.gte': '1.0' },
      { 'amount.gte': '1', 'paymentMethod.eq': 'Check' },
    ]) {
      expectRefused(await list(token, { ...filters, limit: '1', cursor }), 'cursor');
    }
  });

  it('keeps its cursors valid across a restart of the local service', async () => {
    await service.stop();
    await service.startAgain();
    const freshToken = await requestToken(service.baseUrl, 'transactions:read', {
      clientId: `list-${tenant}`,
      clientSecret: SECRET,
    });
    const reply = await list(freshToken, { limit: '1', 'amount.gte': '1', cursor });
    expect(reply.status).toBe(200);
    expect(reply.body).toHaveLength(1);
  });
});
