import { describe, expect, it } from 'vitest';
import { firstDuplicateKey } from '#shared/duplicate-keys';

describe('firstDuplicateKey', () => {
  it.each([
    ['{"amount":"1.00","amount":"999.00"}', 'amount'],
    ['{"creditor":{"name":"a","name":"b"}}', 'creditor.name'],
    ['{"identifiers":[{"number":"1"},{"number":"2","number":"3"}]}', 'identifiers[1].number'],
    ['{"a\\"b":1,"a\\"b":2}', 'a"b'],
    ['{"\\u0061":1,"a":2}', 'a'],
  ])('finds the repeated key in %s', (text, path) => {
    expect(firstDuplicateKey(text)).toBe(path);
  });

  it.each([
    '{"amount":"1.00","currency":"EUR"}',
    '{"a":{"x":1},"b":{"x":1}}',
    '[{"x":1},{"x":2}]',
    '{"text":"a \\"quoted\\" \\\\ value, with {braces} and [brackets]","other":"amount"}',
    '"just a string"',
    '{}',
  ])('finds none in %s', (text) => {
    expect(firstDuplicateKey(text)).toBeUndefined();
  });
});
