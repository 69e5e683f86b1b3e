import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Grants, grantsOf } from '#local/iam-grants';
import { stackIam, stackPolicies } from '#local/iam-policies';

/**
 * Every grant of every role of the stack, per stage, exactly as committed in
 * iam-grants.expected.json: one grant added (a status reader granted GetItem on `CLIENT#`) or
 * taken away fails here, naming it. A change meant: `npm run iam:report -- grants --write`, and
 * the file's diff reviewed with the change.
 */
const EXPECTED = JSON.parse(
  readFileSync(new URL('./iam-grants.expected.json', import.meta.url), 'utf8'),
) as Record<string, Grants>;

/** One line per grant: `<role> <grant>`. */
const linesOf = (grants: Grants): string[] =>
  Object.entries(grants).flatMap(([role, lines]) => lines.map((line) => `${role} ${line}`));

/** The lines of `actual` that `expected` lacks. */
const beyond = (actual: Grants, expected: Grants): string[] => {
  const known = new Set(linesOf(expected));
  return linesOf(actual).filter((line) => !known.has(line));
};

describe.each(['dev', 'prod'])('the %s stage', (stage) => {
  const actual = grantsOf(stackPolicies(stackIam(stage), { tableName: 'credit-transfers' }));
  const expected = EXPECTED[stage] as Grants;

  it('grants nothing beyond the committed list', () => {
    expect(beyond(actual, expected), 'grants not in test/unit/local/iam-grants.expected.json').toEqual([]);
  });

  it('grants everything of the committed list (one taken away is a change to review too)', () => {
    expect(beyond(expected, actual), 'grants of the committed list the stack no longer gives').toEqual([]);
  });

  it('has the same roles, each with the same grants in the same number', () => {
    expect(actual).toEqual(expected);
  });
});

describe('the comparison', () => {
  it('names a grant added to one function', () => {
    const prod = EXPECTED.prod as Grants;
    const widened = {
      ...prod,
      GetCreditTransferStatus: [
        ...(prod.GetCreditTransferStatus ?? []),
        'dynamodb:GetItem dynamodb:table keys CLIENT#*',
      ],
    };
    expect(beyond(widened, prod)).toEqual([
      'GetCreditTransferStatus dynamodb:GetItem dynamodb:table keys CLIENT#*',
    ]);
  });
});
