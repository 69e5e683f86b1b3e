import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StateMachineDefinition } from 'aws-local-stepfunctions';
import { afterAll, beforeEach, expect, it } from 'vitest';
import { validatedStateMachine as validatedIn } from '#local/validated-state-machine';

/** A cache of this file's own: services started by other files meanwhile write the project's. */
const folder = mkdtempSync(join(tmpdir(), 'validated-'));
const CACHE_FILE = join(folder, 'validated-state-machines.json');
const validatedStateMachine = (definition: StateMachineDefinition) => validatedIn(definition, CACHE_FILE);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const pass = (result: string): StateMachineDefinition => ({
  StartAt: 'Done',
  States: { Done: { Type: 'Pass', Result: result, End: true } },
});
/** Its only state names a successor that does not exist. */
const broken: StateMachineDefinition = {
  StartAt: 'Done',
  States: { Done: { Type: 'Pass', Next: 'Nowhere' } },
} as unknown as StateMachineDefinition;

const remembered = (): unknown => JSON.parse(readFileSync(CACHE_FILE, 'utf8'));

beforeEach(() => rmSync(CACHE_FILE, { force: true }));

it('validates a definition once, remembers it, and still runs it', async () => {
  const machine = validatedStateMachine(pass('first'));
  expect(remembered()).toHaveLength(1);
  expect(await machine.run({}).result).toBe('first');
  const again = validatedStateMachine(pass('first'));
  expect(remembered()).toHaveLength(1);
  expect(await again.run({}).result).toBe('first');
});

it('refuses an invalid definition even when a valid one is remembered, and remembers nothing of it', () => {
  validatedStateMachine(pass('first'));
  expect(() => validatedStateMachine(broken)).toThrow();
  expect(remembered()).toHaveLength(1);
});

it('validates a changed definition again', () => {
  validatedStateMachine(pass('first'));
  validatedStateMachine(pass('second'));
  expect(remembered()).toHaveLength(2);
});

it('treats a damaged cache as empty and validates again', () => {
  writeFileSync(CACHE_FILE, '{not json');
  expect(() => validatedStateMachine(broken)).toThrow();
  validatedStateMachine(pass('first'));
  expect(remembered()).toHaveLength(1);
});
