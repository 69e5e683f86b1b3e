import { describe, expect, it } from 'vitest';
import { rulesForAbsentTypes } from '../../lib/credit-transfer-app.ts';

/**
 * The Control Tower rules left out of a synthesis are those that cannot find anything in it:
 * every resource type they name is absent from the templates.
 */
describe('Control Tower rules for absent resource types', () => {
  it('leaves out every rule when no resource type is present, each rule naming a type', () => {
    const all = rulesForAbsentTypes(new Set());
    expect(all.length).toBeGreaterThan(200);
    expect(all).toContain('ct-lambda-pr-2');
  });

  it('keeps every rule naming a present type, and only those', () => {
    const all = rulesForAbsentTypes(new Set());
    const absent = rulesForAbsentTypes(new Set(['AWS::Lambda::Function', 'AWS::DynamoDB::Table']));
    const kept = all.filter((rule) => !absent.includes(rule));
    expect(kept).toContain('ct-lambda-pr-3');
    expect(absent).toContain('ct-lambda-pr-2');
    expect(kept.some((rule) => rule.startsWith('ct-dynamodb-'))).toBe(true);
    expect(kept.some((rule) => rule.startsWith('ct-rds-'))).toBe(false);
    expect(absent.some((rule) => rule.startsWith('ct-rds-'))).toBe(true);
  });
});
