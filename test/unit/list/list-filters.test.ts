import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '#domain/commons/errors';
import {
  DEFAULT_LIMIT,
  filtersFingerprint,
  type ListEntry,
  matchesListFilters,
  parseListQuery,
  utcDateOf,
} from '#domain/credit-transfers/list-filters';

const single = (parameters: Record<string, string>) =>
  parseListQuery(Object.fromEntries(Object.entries(parameters).map(([name, value]) => [name, [value]])));

const refusedNames = (parameters: Record<string, readonly string[]>): string[] => {
  try {
    parseListQuery(parameters);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return (error as InvalidRequestError).invalidParams.map((param) => param.name);
  }
  throw new Error(`accepted ${JSON.stringify(parameters)}`);
};

describe('parseListQuery', () => {
  it('takes every filter of spec 4.1, with the limit as a number', () => {
    const parameters = {
      'paymentId.eq': 'p-1',
      'status.eq': 'Rejected',
      'paymentMethod.eq': 'Check',
      'debtorAccountId.eq': '001-DDA-01-123456',
      'creditorAccountNumber.eq': '021000021000987654',
      'creditorAccountId.eq': '5f0c7e2a-8a51-4c1b-9a3e-2b7d9c4e1f00',
      'checkType.eq': 'BusinessCheck',
      'checkNumber.eq': '000123',
      'amount.lte': '9999999999999.99999999',
      'amount.gte': '-0',
      'checkDate.lte': '2026-12-31',
      'checkDate.gte': '2024-02-29',
      'checkNumber.lte': '999',
      'checkNumber.gte': '1',
    };
    const { cursor, limit, filters } = single({ ...parameters, cursor: 'abc.def', limit: '100' });
    expect(filters).toEqual(parameters);
    expect(cursor).toBe('abc.def');
    expect(limit).toBe(100);
  });

  it(`pages by ${DEFAULT_LIMIT} when no limit is given`, () => {
    expect(parseListQuery({})).toEqual({ filters: {}, limit: DEFAULT_LIMIT });
  });

  it.each(['1', '7', '99', '100'])('accepts limit=%s', (limit) => {
    expect(single({ limit }).limit).toBe(Number(limit));
  });

  it.each(['0', '101', 'abc', '1.5', '-1', '', ' 5', '01', '1e2', '+5', '1000'])(
    'refuses limit=%j',
    (limit) => {
      expect(refusedNames({ limit: [limit] })).toEqual(['limit']);
    },
  );

  it.each([
    'amount',
    'amount.eq',
    'amount.lt',
    'status',
    'status.in',
    'paymentid.eq',
    'Limit',
    'offset',
    'page',
    'sort',
    'debtorAccountId',
    'checkDate.eq',
  ])('refuses the unknown parameter %s', (name) => {
    expect(refusedNames({ [name]: ['1'] })).toEqual([name]);
  });

  it.each(['limit', 'cursor', 'amount.gte', 'debtorAccountId.eq', 'checkNumber.lte'])(
    'refuses %s given twice, even with the same value',
    (name) => {
      expect(refusedNames({ [name]: ['5', '5'] })).toEqual([name]);
    },
  );

  it.each([
    ['amount.lte', '12.123456789'],
    ['amount.lte', '12345678901234'],
    ['amount.gte', '0012'],
    ['amount.gte', '1e5'],
    ['amount.gte', '+5'],
    ['amount.gte', '1,5'],
    ['amount.lte', '.5'],
    ['amount.lte', ''],
    ['amount.lte', 'NaN'],
    ['checkDate.gte', '2026-02-30'],
    ['checkDate.gte', '2026-1-01'],
    ['checkDate.lte', '20260101'],
    ['checkDate.lte', '2026-01-01T00:00:00Z'],
    ['checkDate.lte', ''],
    ['creditorAccountNumber.eq', 'n'.repeat(31)],
    ['creditorAccountId.eq', 'c'.repeat(37)],
    ['creditorAccountId.eq', ''],
    ['debtorAccountId.eq', 'd'.repeat(37)],
    ['paymentId.eq', 'p'.repeat(37)],
    ['paymentMethod.eq', 'm'.repeat(36)],
    ['checkNumber.gte', ''],
    ['cursor', ''],
    ['cursor', 'c'.repeat(1025)],
    ['status.eq', 'rejected'],
    ['status.eq', 'Settled'],
    ['status.eq', ''],
    ['status.eq', 'Rejected '],
  ])('refuses %s=%j', (name, value) => {
    expect(refusedNames({ [name]: [value] })).toEqual([name]);
  });

  it.each([
    'Received',
    'AcceptedTechnicalValidation',
    'AcceptedCustomerProfile',
    'AcceptedSettlementInProcess',
    'AcceptedSettlementCompleted',
    'Rejected',
    'Cancelled',
  ])('takes status.eq=%s', (status) => {
    expect(single({ 'status.eq': status }).filters).toEqual({ 'status.eq': status });
  });

  it('names every offending parameter at once', () => {
    expect(
      refusedNames({ limit: ['0'], 'amount.lte': ['x'], bogus: ['1'], 'checkDate.gte': ['soon'] }).sort(),
    ).toEqual(['amount.lte', 'bogus', 'checkDate.gte', 'limit']);
  });
});

describe('filtersFingerprint', () => {
  it('depends on the filters, not on the order they were given in', () => {
    expect(filtersFingerprint({ 'amount.gte': '1', 'paymentMethod.eq': 'Check' })).toBe(
      filtersFingerprint({ 'paymentMethod.eq': 'Check', 'amount.gte': '1' }),
    );
    expect(filtersFingerprint({ 'amount.gte': '1' })).not.toBe(filtersFingerprint({ 'amount.gte': '1.0' }));
    expect(filtersFingerprint({ 'amount.gte': '1' })).not.toBe(filtersFingerprint({ 'amount.lte': '1' }));
    expect(filtersFingerprint({})).not.toBe(filtersFingerprint({ 'amount.lte': '1' }));
  });
});

describe('utcDateOf', () => {
  it.each([
    ['2026-12-01T09:00:00Z', '2026-12-01'],
    ['2026-12-01T23:30:00-01:00', '2026-12-02'],
    ['2026-12-01T00:30:00+01:00', '2026-11-30'],
    ['2026-12-31T23:59:59.999999-00:01', '2027-01-01'],
    ['2025-01-01T00:00:00+14:00', '2024-12-31'],
    ['2024-02-28T20:00:00-05:00', '2024-02-29'],
    ['0001-01-01T12:00:00Z', '0001-01-01'],
    ['2026-06-15T12:00:00.5z', '2026-06-15'],
  ])('reads %s as %s', (dateTime, date) => {
    expect(utcDateOf(dateTime)).toBe(date);
  });

  it('agrees with the platform date parser on any date-time from 1970 to 9999', () => {
    const dateTime = fc
      .record({
        instant: fc.date({
          min: new Date('1970-01-02T00:00:00Z'),
          max: new Date('9999-12-30T00:00:00Z'),
          noInvalidDate: true,
        }),
        offsetMinutes: fc.integer({ min: -14 * 60, max: 14 * 60 }),
      })
      .map(({ instant, offsetMinutes }) => {
        const local = new Date(instant.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 23);
        const sign = offsetMinutes < 0 ? '-' : '+';
        const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
        const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
        return `${local}${sign}${hours}:${minutes}`;
      });
    fc.assert(
      fc.property(dateTime, (value) => utcDateOf(value) === new Date(value).toISOString().slice(0, 10)),
      { numRuns: 2000 },
    );
  });

  it('has no date for text that is not a date-time with offset', () => {
    expect(utcDateOf('2026-12-01')).toBeUndefined();
    expect(utcDateOf('2026-12-01T09:00:00')).toBeUndefined();
  });
});

describe('matchesListFilters', () => {
  const entry: ListEntry = {
    paymentMethod: 'Check',
    amount: '125.50',
    debtorAccountId: 'debtor-1',
    creditorAccountId: 'creditor-1',
    creditorAccountNumber: 'BBAN-1',
    checkType: 'BusinessCheck',
    checkNumber: '000123',
    checkDate: '2026-12-01',
  };

  it('keeps a transfer that passes every filter given (AND)', () => {
    expect(matchesListFilters(entry, {})).toBe(true);
    expect(
      matchesListFilters(entry, {
        'paymentMethod.eq': 'Check',
        'amount.gte': '125.5',
        'amount.lte': '125.500',
        'checkNumber.eq': '123',
        'checkDate.gte': '2026-12-01',
        'checkDate.lte': '2026-12-01',
        'creditorAccountNumber.eq': 'BBAN-1',
      }),
    ).toBe(true);
  });

  it.each([
    { 'paymentMethod.eq': 'check' },
    { 'debtorAccountId.eq': 'debtor-2' },
    { 'creditorAccountId.eq': 'creditor-2' },
    { 'creditorAccountNumber.eq': 'BBAN-2' },
    { 'checkType.eq': 'Business' },
    { 'checkNumber.eq': '124' },
    { 'checkNumber.gte': '124' },
    { 'checkNumber.lte': '122' },
    { 'amount.gte': '125.50000001' },
    { 'amount.lte': '125.49999999' },
    { 'checkDate.gte': '2026-12-02' },
    { 'checkDate.lte': '2026-11-30' },
    { 'paymentMethod.eq': 'Check', 'amount.gte': '200' },
  ])('drops a transfer that fails %j', (filters) => {
    expect(matchesListFilters(entry, filters)).toBe(false);
  });

  it('never matches a check or creditor filter on a transfer without that field', () => {
    const bare: ListEntry = { paymentMethod: 'Check', amount: '1', debtorAccountId: 'debtor-1' };
    for (const filters of [
      { 'checkType.eq': 'BusinessCheck' },
      { 'checkNumber.gte': '0' },
      { 'checkNumber.lte': 'zzzz' },
      { 'checkDate.gte': '0001-01-01' },
      { 'checkDate.lte': '9999-12-31' },
      { 'creditorAccountId.eq': 'creditor-1' },
      { 'creditorAccountNumber.eq': 'BBAN-1' },
    ]) {
      expect(matchesListFilters(bare, filters), JSON.stringify(filters)).toBe(false);
    }
  });
});
