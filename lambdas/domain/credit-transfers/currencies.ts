import { data as listOne } from 'currency-codes';

/**
 * ISO 4217 currencies as the `currency-codes` package holds them: the codes and minor units of
 * List One on the package's publish date (its `publishDate`, 2024-06-25 in 2.2.0). Only the initiation imports
 * this module: the package's data (about 18 KB minified) stays out of every other function.
 */

/** Codes of List One nobody can settle in: XTS is reserved for testing, XXX means "no currency". */
const NOT_A_CURRENCY = ['XTS', 'XXX'];

/**
 * The package gives 0 for the codes whose minor unit the standard gives as "N.A." (precious
 * metals, units of account). They have no minor unit to bound an amount by, so the spec's eight
 * fractional digits apply. test/unit/domain/currencies.test.ts holds this list to the package's
 * own copy of List One (iso-4217-list-one.xml), where "N.A." is still written.
 */
export const NO_MINOR_UNIT: ReadonlySet<string> = new Set([
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XUA',
]);

/**
 * ISO 4217 amendments after the package's publish date, which it has not caught up with (it
 * carries no withdrawal dates, only List One as it was). The unit test fails once the package
 * includes them, so each is removed when it is no longer needed.
 */
export const AMENDMENTS_AFTER_PACKAGE = {
  /** Withdrawn: ANG (replaced by XCG, 2025-03-31), BGN (the euro, 2026-01-01), CUC (out of use since 2021). */
  withdrawn: ['ANG', 'BGN', 'CUC'],
  /** Introduced: XCG, the Caribbean guilder of Curaçao and Sint Maarten (2025-03-31), 2 decimals. */
  introduced: [{ code: 'XCG', digits: 2 }],
} as const;

const withdrawn: ReadonlySet<string> = new Set([...NOT_A_CURRENCY, ...AMENDMENTS_AFTER_PACKAGE.withdrawn]);

/** Each active code, and how many fractional digits an amount in it may have (undefined: no minor unit). */
const MINOR_UNITS: ReadonlyMap<string, number | undefined> = new Map(
  [...listOne, ...AMENDMENTS_AFTER_PACKAGE.introduced]
    .filter(({ code }) => !withdrawn.has(code))
    .map(({ code, digits }) => [code, NO_MINOR_UNIT.has(code) ? undefined : digits]),
);

export const isActiveCurrency = (code: string): boolean => MINOR_UNITS.has(code);

/**
 * The ISO 4217 minor unit of an active currency: 2 for EUR, 0 for JPY, 3 for BHD, 4 for CLF;
 * undefined for a currency without one (XAU) and for a code that is not an active currency.
 */
export const minorUnitOf = (code: string): number | undefined => MINOR_UNITS.get(code);
