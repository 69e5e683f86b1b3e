import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's folder of synthesized stages (test/infra/synth.ts); gone when the run ends. */
    synthCacheDir: string;
  }
}

/**
 * A fresh folder per run, so a stage is synthesized once per run and shared by every file that
 * asserts on it, and a template from an earlier run (older code) can never be read.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'synth-cache-'));
  project.provide('synthCacheDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
