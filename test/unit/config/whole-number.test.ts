import { afterEach, describe, expect, it } from 'vitest';
import { clientLimits } from '#local/api-gateway';
import { SettingError, wholeNumber, wholeNumberEnv } from '#shared/config';

describe('a whole-number setting', () => {
  it('takes digits within its bounds', () => {
    expect(wholeNumber('PORT', '0', { min: 0, max: 65_535 })).toBe(0);
    expect(wholeNumber('PORT', '65535', { min: 0, max: 65_535 })).toBe(65_535);
    expect(wholeNumber('--runs', '12', { min: 1 })).toBe(12);
  });

  for (const text of [
    '',
    ' 7',
    '7 ',
    '1e3',
    '2.5',
    '-1',
    '0x10',
    'abc',
    'Infinity',
    '99999999999999999999',
  ]) {
    it(`refuses "${text}", naming the setting and the value`, () => {
      expect(() => wholeNumber('RECONCILE_INTERVAL_SECONDS', text, { min: 1 })).toThrow(SettingError);
      expect(() => wholeNumber('RECONCILE_INTERVAL_SECONDS', text, { min: 1 })).toThrow(
        `RECONCILE_INTERVAL_SECONDS must be a whole number at least 1, not "${text}"`,
      );
    });
  }

  it('refuses what lies outside its bounds, saying them', () => {
    expect(() => wholeNumber('Context alarmDays', '0', { min: 1, max: 9999 })).toThrow(
      'Context alarmDays must be a whole number from 1 to 9999, not "0"',
    );
    expect(() => wholeNumber('Context alarmDays', '10000', { min: 1, max: 9999 })).toThrow(/from 1 to 9999/);
  });
});

describe('a whole number from the environment', () => {
  const NAME = 'WHOLE_NUMBER_TEST_SETTING';
  afterEach(() => {
    delete process.env[NAME];
  });

  it('is the fallback when unset or empty', () => {
    expect(wholeNumberEnv(NAME, 15, { min: 1 })).toBe(15);
    process.env[NAME] = '';
    expect(wholeNumberEnv(NAME, 15, { min: 1 })).toBe(15);
  });

  it('is the value when set, and refuses a bad one naming the variable', () => {
    process.env[NAME] = '42';
    expect(wholeNumberEnv(NAME, 15, { min: 1 })).toBe(42);
    process.env[NAME] = 'soon';
    expect(() => wholeNumberEnv(NAME, 15, { min: 1 })).toThrow(
      `Environment variable ${NAME} must be a whole number at least 1, not "soon"`,
    );
  });
});

describe("the local gateway's client time limit", () => {
  it('is 30 s when unset or empty, and the value when set', () => {
    expect(clientLimits({}).totalMs).toBe(30_000);
    expect(clientLimits({ CLIENT_TIMEOUT_MS: '' }).totalMs).toBe(30_000);
    expect(clientLimits({ CLIENT_TIMEOUT_MS: '3000' }).totalMs).toBe(3000);
  });

  it('refuses a value that is not whole milliseconds, naming the variable as every setting is named', () => {
    expect(() => clientLimits({ CLIENT_TIMEOUT_MS: '30s' })).toThrow(
      'Environment variable CLIENT_TIMEOUT_MS (milliseconds) must be a whole number at least 100, not "30s"',
    );
  });
});
