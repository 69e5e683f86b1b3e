import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..', '..');
const run = promisify(execFile);

interface Finding {
  code: string;
  severity: number;
  path: string[];
}

/**
 * The same check as `npm run openapi:lint` (about two seconds): the committed document must be
 * current, then it is linted with .spectral.yaml (spectral:oas, which validates the OpenAPI 3.1
 * structure, and OWASP).
 */
describe('Spectral', () => {
  it('finds no error in the committed document', async () => {
    await run(resolve(root, 'node_modules/.bin/tsx'), ['scripts/openapi-export.ts', '--check'], {
      cwd: root,
    });
    const lint = await run(
      resolve(root, 'node_modules/.bin/spectral'),
      ['lint', '--format', 'json', '--fail-severity', 'error', 'openapi/openapi.json'],
      { cwd: root },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '[]' }));
    const findings = JSON.parse(lint.stdout) as Finding[];
    const errors = findings.filter((finding) => finding.severity === 0);
    expect(errors.map((finding) => `${finding.code} at ${finding.path.join('.')}`)).toEqual([]);
    // The only warning left: no contact is known for the API yet.
    expect(findings.map((finding) => finding.code)).toEqual(['info-contact']);
  }, 30_000);
});
