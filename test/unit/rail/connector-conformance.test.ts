import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runConformance } from '../../../scripts/connector/conformance.ts';
import { type ConnectorStub, startConnectorStub } from '../../support/connector-stub.ts';

/** The conformance kit against the project's connector stand-in: it passes, and each fault fails its check. */
const KEY = 'conformance-kit-key-0123456789';
let stub: ConnectorStub;
beforeAll(async () => {
  stub = await startConnectorStub(KEY);
  stub.refusals.set('acc-refused', { reason: 'InsufficientFunds', reasonCode: 'AM04' });
});
afterAll(() => stub.close());
beforeEach(() => {
  stub.faults = {};
});

const run = () =>
  runConformance({
    url: stub.url,
    secret: KEY,
    debtorAccountId: 'acc-001',
    refusedDebtorAccountId: 'acc-refused',
  });
const failed = async () => (await run()).filter((result) => !result.passed).map((result) => result.name);

describe('connector conformance kit', () => {
  it('passes a connector that keeps the contract, submitting each of its payments once', async () => {
    const before = stub.submissions.size;
    const results = await run();
    expect(results.filter((result) => !result.passed)).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(8);
    // One clearing record for the payment it submitted six times, five of them at once.
    expect(stub.submissions.size).toBe(before + 1);
  });

  it('fails a connector that accepts requests signed with another key', async () => {
    stub.faults.ignoresSignatures = true;
    expect(await failed()).toEqual(['signature: a request signed with another key is refused']);
  });

  it('fails a connector whose status inquiry answers 404 for a payment it does not have', async () => {
    stub.faults.statusOfUnknownAs404 = true;
    expect(await failed()).toEqual(['status inquiry before submission: unknown']);
  });

  it('fails a refusal whose reason code is not in the ISO code set', async () => {
    stub.refusals.set('acc-refused', { reason: 'Whatever', reasonCode: 'ZZ99' });
    try {
      expect(await failed()).toEqual([
        'customer-profile refusal: a reason, and an ISO 20022 code the code set has',
      ]);
    } finally {
      stub.refusals.set('acc-refused', { reason: 'InsufficientFunds', reasonCode: 'AM04' });
    }
  });

  it('runs as `npm run connector:check`, one line per check and the count, exit 0', async () => {
    const { stdout } = await promisify(execFile)(
      'npm',
      [
        'run',
        '--silent',
        'connector:check',
        '--',
        '--url',
        stub.url,
        '--secret',
        KEY,
        '--account',
        'acc-001',
      ],
      { cwd: process.cwd() },
    );
    expect(stdout).toMatch(/^PASS {2}signature: /m);
    expect(stdout).toMatch(/^7 passed, 0 failed$/m);
  });

  it('exits 1 when a check fails', async () => {
    const failing = promisify(execFile)(
      'npm',
      [
        'run',
        '--silent',
        'connector:check',
        '--',
        '--url',
        stub.url,
        '--secret',
        'wrong-key',
        '--account',
        'acc-001',
      ],
      { cwd: process.cwd() },
    );
    await expect(failing).rejects.toMatchObject({ code: 1, stdout: expect.stringMatching(/^FAIL {2}/m) });
  });
});
