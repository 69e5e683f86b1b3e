import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '#domain/commons/errors';
import { creditTransferRequestSchema } from '#domain/credit-transfers/credit-transfer';
import { initiateCreditTransfer } from '#domain/credit-transfers/initiate-credit-transfer';
import { listCreditTransfersQuerySchema } from '#domain/credit-transfers/list-filters';
import type { CreditTransferStore } from '#domain/credit-transfers/ports';
import { minimalCreditTransfer } from '../../fixtures/credit-transfers.ts';

const store: CreditTransferStore = {
  create: async () => true,
  get: async () => undefined,
};

const NOW = '2026-11-22T12:00:00Z';

/** The invalidParams of an initiation with this body, or [] when it is accepted. */
const refusalOf = async (body: unknown, options: { maxValueDateDays?: number } = {}) => {
  try {
    await initiateCreditTransfer(
      { store, clock: { now: () => new Date(NOW) }, ...options },
      { tenant: 't', clientId: 'c', body, servicer: {} },
    );
    return [];
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    return error.invalidParams;
  }
};

describe('an amount has at most as many decimals as its currency (ISO 4217 minor unit)', () => {
  it.each([
    ['1.005', 'EUR', 'must have at most 2 decimals in EUR (ISO 4217 minor unit 2); it has 3 decimals'],
    ['1.500', 'EUR', 'must have at most 2 decimals in EUR (ISO 4217 minor unit 2); it has 3 decimals'],
    ['1.50', 'JPY', 'must have no decimals in JPY (ISO 4217 minor unit 0); it has 2 decimals'],
    ['1.0', 'JPY', 'must have no decimals in JPY (ISO 4217 minor unit 0); it has 1 decimal'],
    ['1.0005', 'BHD', 'must have at most 3 decimals in BHD (ISO 4217 minor unit 3); it has 4 decimals'],
    ['1.00001', 'CLF', 'must have at most 4 decimals in CLF (ISO 4217 minor unit 4); it has 5 decimals'],
  ])('refuses %s %s, naming the field and the decimals allowed', async (amount, currency, reason) => {
    expect(await refusalOf(minimalCreditTransfer({ amount, currency }))).toEqual([
      { name: 'amount', reason },
    ]);
  });

  it.each([
    ['125.50', 'EUR'],
    ['125.5', 'EUR'],
    ['125', 'EUR'],
    ['150', 'JPY'],
    ['1.005', 'BHD'],
    ['1.0001', 'CLF'],
    ['9999999999999.99', 'USD'],
    // No minor unit (N.A. in the standard): the spec's 8 decimals.
    ['1.12345678', 'XAU'],
    ['0.00000001', 'XDR'],
  ])('accepts %s %s', async (amount, currency) => {
    expect(await refusalOf(minimalCreditTransfer({ amount, currency }))).toEqual([]);
  });

  it('keeps the spec 8 decimals for a transfer without a currency', async () => {
    expect(await refusalOf(minimalCreditTransfer({ amount: '1.12345678' }))).toEqual([]);
  });

  it('applies the same rule to check.amount with check.currency, and only with it', async () => {
    const check = (amount: string, currency?: string) => ({
      checkType: 'BusinessCheck',
      amount,
      ...(currency !== undefined && { currency }),
    });
    expect(await refusalOf(minimalCreditTransfer({ check: check('10.5', 'JPY') }))).toEqual([
      {
        name: 'check.amount',
        reason: 'must have no decimals in JPY (ISO 4217 minor unit 0); it has 1 decimal',
      },
    ]);
    expect(await refusalOf(minimalCreditTransfer({ check: check('10.005', 'KWD') }))).toEqual([]);
    // The transfer's own currency says nothing about the check's amount.
    expect(
      await refusalOf(minimalCreditTransfer({ currency: 'JPY', amount: '10', check: check('10.5') })),
    ).toEqual([]);
  });

  it('refuses every currency field that is not an active code, each by name', async () => {
    const body = minimalCreditTransfer({
      currency: 'XTS',
      exchange: { currency: 'HRK', exchangeFactor: '1.1' },
      check: { currency: 'XXX', amount: '1.5' },
      creditor: { account: { currency: 'BGN' } },
      debtor: { account: { currency: 'EUR' } },
    });
    const refused = await refusalOf(body);
    expect(refused.map(({ name }) => name)).toEqual([
      'check.currency',
      'creditor.account.currency',
      'currency',
      'exchange.currency',
    ]);
    expect(refused.every(({ reason }) => reason === 'must be an active ISO 4217 currency code')).toBe(true);
  });
});

describe('an amount ends in a digit', () => {
  it.each(['1.', '0.', '-1.', '125.'])(
    'refuses %s by its pattern, in the body and in the list filters',
    (amount) => {
      const body = creditTransferRequestSchema.safeParse(minimalCreditTransfer({ amount }));
      expect(body.success).toBe(false);
      expect(body.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['amount']);
      expect(listCreditTransfersQuerySchema.safeParse({ 'amount.gte': amount }).success).toBe(false);
    },
  );

  it('lets a list filter be finer than any currency (the pattern only)', () => {
    expect(listCreditTransfersQuerySchema.safeParse({ 'amount.lte': '1.12345678' }).success).toBe(true);
  });
});

describe('valueDate is at most a year ahead (MAX_VALUE_DATE_DAYS)', () => {
  it('accepts the last day of the horizon and refuses the next, naming the field', async () => {
    expect(await refusalOf(minimalCreditTransfer({ valueDate: '2027-11-22' }))).toEqual([]);
    expect(await refusalOf(minimalCreditTransfer({ valueDate: '2027-11-23' }))).toEqual([
      { name: 'valueDate', reason: 'must be at most 365 days ahead (2027-11-22, UTC, or earlier)' },
    ]);
  });

  it('refuses 9999-12-31', async () => {
    expect(await refusalOf(minimalCreditTransfer({ valueDate: '9999-12-31' }))).toMatchObject([
      { name: 'valueDate' },
    ]);
  });

  it('follows the setting', async () => {
    const body = minimalCreditTransfer({ valueDate: '2026-12-03' });
    expect(await refusalOf(body, { maxValueDateDays: 11 })).toEqual([]);
    expect(await refusalOf(body, { maxValueDateDays: 10 })).toMatchObject([{ name: 'valueDate' }]);
  });
});

describe('check.amount follows the amount rules', () => {
  it.each(['-5', '0', '0.00', '-0.01'])('refuses %s, naming check.amount', async (amount) => {
    expect(await refusalOf(minimalCreditTransfer({ check: { checkType: 'BusinessCheck', amount } }))).toEqual(
      [{ name: 'check.amount', reason: 'must be greater than zero' }],
    );
  });

  it('accepts a positive one', async () => {
    expect(
      await refusalOf(minimalCreditTransfer({ check: { checkType: 'BusinessCheck', amount: '5' } })),
    ).toEqual([]);
  });
});
