import { describe, expect, it } from 'vitest';
import { csv, csvField, TRANSFER_FIELDS } from '../../client/src/cli/output.ts';
import { parseDuration } from '../../client/src/duration.ts';

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
