import type { InvalidParam } from '../commons/errors.ts';
import type { CreditTransferRequest } from './credit-transfer.ts';
import { isActiveCurrency, minorUnitOf } from './currencies.ts';

/**
 * Rules on amounts and currencies beyond the shape of the fields, as a bank applies them:
 * every currency is an active ISO 4217 code, and an amount has no more fractional digits than
 * its currency's minor unit (an amount without a currency keeps the spec's 8).
 */

const fractionDigits = (amount: string): number => amount.split('.')[1]?.length ?? 0;

const decimals = (count: number): string => (count === 1 ? '1 decimal' : `${count} decimals`);

/** Why `amount` does not fit `currency`'s minor unit, or undefined when it does. */
export const minorUnitViolation = (amount: string, currency: string): string | undefined => {
  const allowed = minorUnitOf(currency);
  const digits = fractionDigits(amount);
  if (allowed === undefined || digits <= allowed) return undefined;
  return allowed === 0
    ? `must have no decimals in ${currency} (ISO 4217 minor unit 0); it has ${decimals(digits)}`
    : `must have at most ${decimals(allowed)} in ${currency} (ISO 4217 minor unit ${allowed}); it has ${decimals(digits)}`;
};

type Json = unknown;

/**
 * Every field named `currency` in the transfer, by its name in `invalidParams` (`currency`,
 * `exchange.currency`, `creditor.account.currency`, ...). The schema is strict, so a key of that
 * name is a currency field wherever it appears; the body is already parsed and shallow.
 */
const currencyFields = (transfer: Json): [string, unknown][] => {
  const found: [string, unknown][] = [];
  const pending: [string, Json][] = [['', transfer]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [path, value] = next;
    if (value === null || typeof value !== 'object') continue;
    for (const [key, item] of Object.entries(value)) {
      const name = Array.isArray(value) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
      if (key === 'currency' && !Array.isArray(value)) found.push([name, item]);
      else pending.push([name, item]);
    }
  }
  return found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
};

/** The amount and currency pairs a transfer carries: its own, and its check's. */
const amountsWithCurrency = (transfer: CreditTransferRequest) => [
  { amountField: 'amount', amount: transfer.amount, currency: transfer.currency },
  { amountField: 'check.amount', amount: transfer.check?.amount, currency: transfer.check?.currency },
];

export const moneyRuleViolations = (transfer: CreditTransferRequest): InvalidParam[] => {
  const violations: InvalidParam[] = [];
  for (const [name, code] of currencyFields(transfer)) {
    if (typeof code === 'string' && !isActiveCurrency(code))
      violations.push({ name, reason: 'must be an active ISO 4217 currency code' });
  }
  for (const { amountField, amount, currency } of amountsWithCurrency(transfer)) {
    if (amount === undefined || currency === undefined || !isActiveCurrency(currency)) continue;
    const reason = minorUnitViolation(amount, currency);
    if (reason !== undefined) violations.push({ name: amountField, reason });
  }
  return violations;
};
