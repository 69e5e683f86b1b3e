import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectOutput, spawnService } from '#local/service-process';
import { removeDataDir } from './support/local-service.ts';

const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await removeDataDir(folder);
});

/** `npm start`'s script with these settings: its exit code, output and the data folder's files. */
const startWith = async (env: Record<string, string>) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'credit-transfers-settings-'));
  folders.push(dataDir);
  const child = spawnService(dataDir, env);
  const output = collectOutput(child);
  // A start that goes on is the failure: it is stopped well within the test's time.
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(killer);
  return {
    code,
    output: output().trim(),
    files: await readdir(dataDir),
  };
};

const isSecret = (file: string) =>
  file.endsWith('.pem') || file === 'list-cursor-secret' || file === 'webhook-secret-key';

describe('npm start with a setting it cannot use', () => {
  const cases: [name: string, value: string, says: string][] = [
    ['PORT', 'http', 'Environment variable PORT must be a whole number from 0 to 65535, not "http"'],
    [
      'RECONCILE_INTERVAL_SECONDS',
      '1.5',
      'Environment variable RECONCILE_INTERVAL_SECONDS must be a whole number from 1 to 3600, not "1.5"',
    ],
    [
      'LOCAL_AUTHORIZER_CACHE_SECONDS',
      '60',
      'Environment variable LOCAL_AUTHORIZER_CACHE_SECONDS must be a whole number from 0 to 30, not "60"',
    ],
  ];
  for (const [name, value, says] of cases) {
    it(`refuses to start when ${name}=${value}, in one line naming it, before the table starts`, async () => {
      const outcome = await startWith({ [name]: value });
      expect(outcome.code, outcome.output).toBe(1);
      expect(outcome.output).toBe(`Cannot start: ${says}`);
      // Nothing was started on the data folder: no table, no event log (only its secrets exist).
      expect(outcome.files.filter((file) => !isSecret(file))).toEqual([]);
    });
  }
});
