import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { data as listOne, publishDate } from 'currency-codes';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  AMENDMENTS_AFTER_PACKAGE,
  isActiveCurrency,
  minorUnitOf,
  NO_MINOR_UNIT,
} from '#domain/credit-transfers/currencies';

const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The package's own copy of ISO 4217 List One, where the standard's "N.A." is still written. */
const packageListOne = (): { code: string; minorUnit: string }[] => {
  const packageDir = dirname(createRequire(import.meta.url).resolve('currency-codes/package.json'));
  const xml = readFileSync(join(packageDir, 'iso-4217-list-one.xml'), 'utf8');
  return [...xml.matchAll(/<CcyNtry>([\s\S]*?)<\/CcyNtry>/g)].flatMap(([, entry = '']) => {
    const code = /<Ccy>([A-Z]{3})<\/Ccy>/.exec(entry)?.[1];
    const minorUnit = /<CcyMnrUnts>([^<]*)<\/CcyMnrUnts>/.exec(entry)?.[1];
    return code !== undefined && minorUnit !== undefined ? [{ code, minorUnit }] : [];
  });
};

describe('ISO 4217 minor units, from the currency-codes package', () => {
  it.each([
    ['EUR', 2],
    ['USD', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['BHD', 3],
    ['KWD', 3],
    ['TND', 3],
    ['CLF', 4],
    ['UYW', 4],
    ['XCG', 2],
  ] as const)('%s has %i decimals, as the standard says', (code, digits) => {
    expect(isActiveCurrency(code)).toBe(true);
    expect(minorUnitOf(code)).toBe(digits);
  });

  it.each(['XAU', 'XAG', 'XPD', 'XPT', 'XDR', 'XSU', 'XUA', 'XBA', 'XBB', 'XBC', 'XBD'])(
    '%s is a currency without a minor unit (the standard says N.A.; the package says 0)',
    (code) => {
      expect(isActiveCurrency(code)).toBe(true);
      expect(minorUnitOf(code)).toBeUndefined();
      expect(listOne.find((entry) => entry.code === code)?.digits).toBe(0);
    },
  );

  it.each(['XTS', 'XXX', 'HRK', 'SLL', 'ZWL', 'ANG', 'BGN', 'CUC', 'EEK', 'EUX'])(
    '%s is refused: a testing code, no currency, withdrawn or never assigned',
    (code) => {
      expect(isActiveCurrency(code)).toBe(false);
    },
  );

  it('treats exactly the codes the standard gives no minor unit (N.A. in List One) as having none', () => {
    const notApplicable = packageListOne()
      .filter(({ minorUnit }) => minorUnit === 'N.A.')
      .map(({ code }) => code)
      .filter((code) => isActiveCurrency(code));
    expect(new Set(notApplicable)).toEqual(NO_MINOR_UNIT);
  });

  it('takes every other minor unit from the package, as List One states it', () => {
    const entries = packageListOne().filter(({ code }) => isActiveCurrency(code) && !NO_MINOR_UNIT.has(code));
    expect(entries.length).toBeGreaterThan(150);
    for (const { code, minorUnit } of entries) expect(minorUnitOf(code), code).toBe(Number(minorUnit));
    expect(listOne.filter(({ code }) => isActiveCurrency(code)).length).toBeGreaterThan(170);
  });

  it('keeps amendments only while the package predates them', () => {
    // A newer package may include them: this fails then, and the amendment goes.
    expect(publishDate).toBe('2024-06-25');
    const packaged = new Set(listOne.map(({ code }) => code));
    for (const code of AMENDMENTS_AFTER_PACKAGE.withdrawn) expect(packaged.has(code), code).toBe(true);
    for (const { code } of AMENDMENTS_AFTER_PACKAGE.introduced) expect(packaged.has(code), code).toBe(false);
  });
});

describe('the currency data in the bundles', () => {
  const inputsOf = async (entry: string) => {
    const result = await build({
      entryPoints: [join(PROJECT_ROOT, entry)],
      bundle: true,
      write: false,
      minify: true,
      format: 'esm',
      platform: 'node',
      metafile: true,
      logLevel: 'silent',
      // Only what is ours and the currency package matters here.
      external: ['@aws-sdk/*', '@smithy/*', '@aws-lambda-powertools/*', 'aws-xray-sdk-core'],
    });
    return result.metafile.outputs[Object.keys(result.metafile.outputs)[0] ?? '']?.inputs ?? {};
  };

  it('is carried by the initiation only, and is small there', async () => {
    const initiation = await inputsOf('lambdas/api/initiate-credit-transfer.ts');
    const currencyBytes = Object.entries(initiation)
      .filter(([path]) => path.includes('node_modules/currency-codes/'))
      .reduce((total, [, input]) => total + input.bytesInOutput, 0);
    expect(currencyBytes).toBeGreaterThan(0);
    expect(currencyBytes).toBeLessThan(24 * 1024);

    for (const entry of [
      'lambdas/api/list-credit-transfers.ts',
      'lambdas/api/get-credit-transfer-status.ts',
      'lambdas/api/cancel-credit-transfer.ts',
    ]) {
      const inputs = Object.keys(await inputsOf(entry));
      expect(inputs.length, entry).toBeGreaterThan(10);
      expect(
        inputs.filter((path) => path.includes('currency-codes')),
        entry,
      ).toEqual([]);
    }
  }, 60_000);
});
