import { afterEach, describe, expect, it } from 'vitest';
import { workflowDependencies } from '#workflow/dependencies';

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

describe('the workflow functions without the rail', () => {
  it('start on a connector stage without the connector settings, which only the rail callers get', () => {
    // As the stack sets them for the validation and publishing functions: RAIL, but no CONNECTOR_URL.
    process.env.RAIL = 'connector';
    delete process.env.CONNECTOR_URL;
    process.env.TABLE_NAME = 'credit-transfers';
    const dependencies = workflowDependencies();
    expect(dependencies.store).toBeDefined();
    expect(() => dependencies.rail).toThrow(/CONNECTOR_URL/);
  });
});
