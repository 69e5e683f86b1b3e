import { describe, expect, it } from 'vitest';
import {
  CSV_COLUMNS,
  csv,
  csvField,
  formatTransfers,
  parseColumns,
  TRANSFER_COLUMNS,
  TRANSFER_FIELDS,
} from '../../client/src/cli/output.ts';
import { parseDuration } from '../../client/src/duration.ts';
import type { CreditTransfer } from '../../client/src/types.ts';

describe('CSV (RFC 4180)', () => {
  it('quotes fields holding a comma, a quote or a line break, doubling quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(undefined)).toBe('');
    expect(csvField({ name: 'A, B' })).toBe('"{""name"":""A, B""}"');
  });

  it('writes a header row and CRLF-terminated records', () => {
    expect(csv(['paymentId', 'purpose'], [{ paymentId: 'p', purpose: 'x,y' }])).toBe(
      'paymentId,purpose\r\np,"x,y"\r\n',
    );
  });

  it('puts paymentId first among the fields', () => {
    expect(TRANSFER_FIELDS[0]).toBe('paymentId');
  });
});

describe('transfer columns', () => {
  const transfer = {
    paymentId: 'p-1',
    status: 'Rejected',
    statusReason: 'InsufficientFunds',
    statusReasonCode: 'AM04',
    amount: '25.00',
    currency: 'EUR',
    creditor: { name: 'Acme, Inc.' },
    date: '2026-11-27T00:00:00.000Z',
  } as unknown as CreditTransfer;

  it('shows the columns that matter by default, a party name read inside its field', () => {
    expect(formatTransfers('csv', [transfer])).toBe(
      `${CSV_COLUMNS.join(',')}\r\np-1,Rejected,InsufficientFunds,AM04,25.00,EUR,"Acme, Inc.",,,,2026-11-27T00:00:00.000Z\r\n`,
    );
  });

  it('takes the columns named, in their order, or all of them', () => {
    expect(parseColumns('currency, paymentId')).toEqual({ columns: ['currency', 'paymentId'] });
    expect(formatTransfers('csv', [transfer], ['currency', 'paymentId'])).toBe(
      'currency,paymentId\r\nEUR,p-1\r\n',
    );
    expect(parseColumns('all')).toEqual({ columns: [...TRANSFER_COLUMNS] });
  });

  it('names the columns it does not know', () => {
    expect(parseColumns('paymentId,creditorName,')).toEqual({ unknown: ['creditorName', ''] });
  });
});

describe('durations', () => {
  it('reads seconds, minutes, hours and days', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('500ms')).toBe(500);
  });

  it('refuses anything else', () => {
    for (const text of ['', '15', 'm', '1w', '-5s', '5 minutes']) expect(parseDuration(text)).toBeUndefined();
  });
});
