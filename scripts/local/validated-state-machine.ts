import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';

const PROJECT_ROOT = join(import.meta.dirname, '..', '..');

/** Hashes of definitions that passed validation (a cache beside the IAM one, never data). */
const VALIDATED_DEFINITIONS_FILE = join(
  PROJECT_ROOT,
  'node_modules',
  '.cache',
  'credit-transfers',
  'validated-state-machines.json',
);

const hashOf = (definition: StateMachineDefinition): string =>
  createHash('sha256').update(JSON.stringify(definition)).digest('hex');

const validatedHashes = (cacheFile: string): string[] => {
  try {
    const hashes: unknown = JSON.parse(readFileSync(cacheFile, 'utf8'));
    return Array.isArray(hashes) ? hashes.filter((hash) => typeof hash === 'string') : [];
  } catch {
    // Missing or damaged: a cache, validated again and rewritten.
    return [];
  }
};

const remember = (cacheFile: string, hashes: string[]): void => {
  try {
    mkdirSync(dirname(cacheFile), { recursive: true });
    const partial = `${cacheFile}.${process.pid}.${threadId}`;
    writeFileSync(partial, JSON.stringify(hashes.slice(-16)));
    renameSync(partial, cacheFile);
  } catch {
    // Read-only project: every start validates, as it would without the cache.
  }
};

/**
 * A state machine validated as Step Functions would on deployment (ARNs, paths, reachability),
 * once per definition: the schema check takes half a second of CPU, and every local start (each
 * integration test's too) would otherwise repeat it on an unchanged definition. `cacheFile` is
 * the project's cache but in its own tests, which must not share it with services starting meanwhile.
 */
export const validatedStateMachine = (
  definition: StateMachineDefinition,
  cacheFile = VALIDATED_DEFINITIONS_FILE,
): StateMachine => {
  const hash = hashOf(definition);
  const known = validatedHashes(cacheFile);
  if (known.includes(hash)) return new StateMachine(definition, { validationOptions: { noValidate: true } });
  const machine = new StateMachine(definition);
  remember(cacheFile, [...known, hash]);
  return machine;
};
