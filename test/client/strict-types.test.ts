import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The SDK's types under the strictest settings an integrator may have (exactOptionalPropertyTypes
 * and the rest), type-checked by tsc against the SDK's sources: what must compile compiles, and a
 * mistake is reported in the SDK's own names. (test/integration/client-pack.test.ts checks the
 * packed package the same way, with a program that runs.)
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SDK = join(ROOT, 'client/src/index.ts');

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noImplicitOverride: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
  },
  files: ['compiles.ts', 'unknown-filter.ts'],
};

/** What an integrator writes and what must compile. */
const COMPILES = `
import { CreditTransfersClient, type FinalStatusReport, type ListFilters } from ${JSON.stringify(SDK)};

const client = new CreditTransfersClient({
  baseUrl: process.env.BASE ?? 'http://127.0.0.1:3000',
  clientId: 'id',
  clientSecret: 'secret',
  // Options read from settings that may be unset.
  scope: process.env.SCOPE,
  retry: { attempts: process.env.ATTEMPTS === undefined ? undefined : Number(process.env.ATTEMPTS) },
});

// A cursor handed from page to page: undefined before the first.
let cursor: string | undefined;
const limit: number | undefined = process.env.LIMIT === undefined ? undefined : Number(process.env.LIMIT);
const filters: ListFilters = { 'status.eq': 'Rejected' };
const page = await client.listPage(filters, { limit, cursor });
cursor = page.cursor === '' ? undefined : page.cursor;
await client.listPage(filters, { limit, cursor, signal: undefined, servicerId: undefined });
await client.webhooks.listPage({ limit, cursor });
await client.initiate(
  { paymentMethod: 'CreditTransfer', amount: '1.00', debtorAccountId: 'a' },
  { idempotencyId: process.env.KEY },
);

// A final rejection always names its reason.
const final: FinalStatusReport = await client.waitForFinalStatus('p', { timeoutMs: undefined });
if (final.status === 'Rejected') {
  const reason: string = final.statusReason;
  void reason;
}
`;

const UNKNOWN_FILTER = `
import { CreditTransfersClient } from ${JSON.stringify(SDK)};
const client = new CreditTransfersClient({ baseUrl: '', clientId: '', clientSecret: '' });
await client.listPage({ 'status.eq': 'Rejected', 'state.eq': 'Rejected' });
`;

let folder: string;
let output: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'sdk-strict-types-'));
  await writeFile(join(folder, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(folder, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  await writeFile(join(folder, 'compiles.ts'), COMPILES);
  await writeFile(join(folder, 'unknown-filter.ts'), UNKNOWN_FILTER);
  try {
    await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['-p', folder], { cwd: folder });
    output = '';
  } catch (error) {
    output = (error as { stdout: string }).stdout;
  }
}, 120_000);

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('the SDK under the strictest compiler settings', () => {
  it('takes options whose values may be undefined (exactOptionalPropertyTypes), and a rejection’s reason as a string', () => {
    const errors = output
      .split('\n')
      .filter((line) => !line.startsWith('unknown-filter.ts') && line.trim() !== '');
    expect(errors).toEqual([]);
  });

  it('names an unknown filter key against the SDK’s filters, without internal Omit<...> types', () => {
    const errors = output.split('\n').filter((line) => line.startsWith('unknown-filter.ts'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('state.eq');
    expect(errors[0]).toContain(`does not exist in type 'Filters<"listCreditTransfers">'`);
    expect(errors[0]).not.toContain('Omit<');
  });
});
