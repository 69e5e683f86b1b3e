import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  CreditTransfersClient,
  PreconditionFailedError,
  PreconditionRequiredError,
} from '../../client/src/index.ts';
import { cliEnv, runCli } from '../client/cli-process.ts';
import { createClient } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * The SDK and the CLI on payment controls and approvals, against the local service: each test a
 * tenant of its own, with an initiator, two approvers and an administrator of its controls.
 */
const service = useLocalService({ env: { LOCAL_LIFECYCLE: 'off' } });
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'cli-approvals-'));
});

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

const EUR_RULE = { name: 'EUR payments', currency: 'EUR', approvalsRequired: 2 };

interface Member {
  clientId: string;
  clientSecret: string;
  sdk: CreditTransfersClient;
  env: Record<string, string>;
}

const member = async (tenant: string, scope: string): Promise<Member> => {
  const clientId = `${tenant}-${randomUUID().slice(0, 8)}`;
  const clientSecret = `${clientId}-secret`;
  await createClient(service, { clientId, clientSecret, scope, tenant });
  return {
    clientId,
    clientSecret,
    sdk: new CreditTransfersClient({
      baseUrl: service.baseUrl,
      clientId,
      clientSecret,
      retry: { baseDelayMs: 50, maxDelayMs: 200 },
    }),
    env: cliEnv(service.baseUrl, { clientId, clientSecret }),
  };
};

const tenant = async () => {
  const name = `sdk-approvals-${randomUUID().slice(0, 8)}`;
  const [initiator, first, second, admin] = await Promise.all([
    member(name, 'transactions:read transactions:write transactions:approve'),
    member(name, 'transactions:read transactions:approve'),
    member(name, 'transactions:read transactions:approve'),
    member(name, 'payment-controls:manage'),
  ]);
  return { initiator, first, second, admin };
};

const transfer = (overrides: Record<string, unknown> = {}) => ({
  paymentMethod: 'CreditTransfer',
  amount: '1500.00',
  currency: 'EUR',
  debtorAccountId: 'DE89370400440532013000',
  ...overrides,
});

const jsonFile = async (content: unknown) => {
  const path = join(folder, `${randomUUID()}.json`);
  await writeFile(path, JSON.stringify(content));
  return path;
};

describe('SDK: payment controls', () => {
  it('reads the controls with their ETag, replaces them naming it, and lists every version', async () => {
    const { admin } = await tenant();
    const empty = await admin.sdk.paymentControls.get();
    expect(empty).toMatchObject({
      controls: { approvalRules: [], approvalExpiry: 'P7D', limits: [] },
      etag: '"0"',
    });
    const first = await admin.sdk.paymentControls.put({ approvalRules: [EUR_RULE] });
    expect(first.etag).toBe('"1"');
    expect(first.controls.approvalRules).toEqual([EUR_RULE]);

    // Without If-Match once a version exists: 428, its own error class.
    const unnamed = await admin.sdk.paymentControls
      .put({ approvalRules: [] })
      .catch((caught: unknown) => caught);
    expect(unnamed).toBeInstanceOf(PreconditionRequiredError);
    expect(unnamed).toBeInstanceOf(ApiError);
    expect(unnamed).toMatchObject({ status: 428, error: 'precondition_required' });

    const second = await admin.sdk.paymentControls.put(
      { approvalRules: [EUR_RULE], approvalExpiry: 'P2D' },
      { ifMatch: first.etag },
    );
    expect(second.etag).toBe('"2"');
    expect((await admin.sdk.paymentControls.get()).etag).toBe('"2"');

    // A change made from the first version, now stale: 412, its own error class; nothing stored.
    const stale = await admin.sdk.paymentControls
      .put({ approvalRules: [] }, { ifMatch: first.etag })
      .catch((caught: unknown) => caught);
    expect(stale).toBeInstanceOf(PreconditionFailedError);
    expect(stale).toMatchObject({ status: 412, error: 'precondition_failed' });
    expect((await admin.sdk.paymentControls.get()).controls.approvalExpiry).toBe('P2D');

    const versions = [];
    for await (const version of admin.sdk.paymentControls.versions()) versions.push(version);
    expect(versions.map(({ version, etag, clientId }) => ({ version, etag, clientId }))).toEqual([
      { version: 2, etag: '"2"', clientId: admin.clientId },
      { version: 1, etag: '"1"', clientId: admin.clientId },
    ]);
    expect(versions[0]?.controls.approvalExpiry).toBe('P2D');
  });
});

describe('SDK: approvals', () => {
  it('approves and rejects pending transfers, and lists the decisions', async () => {
    const { initiator, first, second, admin } = await tenant();
    await admin.sdk.paymentControls.put({ approvalRules: [EUR_RULE] });
    const pending = await initiator.sdk.initiate(transfer());
    expect(pending.status).toBe('Pending');
    expect(pending.approval).toMatchObject({ rule: 'EUR payments', approvalsRequired: 2, approvals: [] });

    const own = await initiator.sdk.approve(pending.paymentId).catch((caught: unknown) => caught);
    expect(own).toMatchObject({ name: 'ApiError', status: 403, error: 'forbidden' });

    const key = randomUUID();
    const once = await first.sdk.approve(pending.paymentId, { reason: 'invoice 4711', idempotencyKey: key });
    expect(once.status).toBe('Pending');
    expect(once.replayed).toBe(false);
    expect(once.approval?.approvals).toEqual([
      expect.objectContaining({ clientId: first.clientId, decision: 'approve', reason: 'invoice 4711' }),
    ]);
    // The same key again: answered again, not refused as a second decision.
    const again = await first.sdk.approve(pending.paymentId, {
      reason: 'invoice 4711',
      idempotencyKey: key,
    });
    expect(again.replayed).toBe(true);
    // A new key is a second decision of the same client: refused.
    const twice = await first.sdk.approve(pending.paymentId).catch((caught: unknown) => caught);
    expect(twice).toMatchObject({ status: 409, error: 'approval_already_decided' });

    const decisions = await second.sdk.approvals(pending.paymentId);
    expect(decisions).toEqual([
      expect.objectContaining({ clientId: first.clientId, decision: 'approve', reason: 'invoice 4711' }),
    ]);
    expect(typeof decisions[0]?.tokenId).toBe('string');

    const rejected = await second.sdk.reject(pending.paymentId, { reason: 'unknown supplier' });
    expect(rejected).toMatchObject({
      status: 'Rejected',
      statusReason: 'OrderCancelled',
      statusReasonCode: 'DS02',
    });
    expect((await second.sdk.approvals(pending.paymentId)).map((entry) => entry.decision)).toEqual([
      'approve',
      'reject',
    ]);
  });
});

describe('CLI: payment controls', () => {
  it('controls get, set (reading the ETag itself, or the one named), versions; a stale ETag is refused clearly', async () => {
    const { admin } = await tenant();
    const empty = await runCli(['controls', 'get'], admin.env);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toContain('ETag: "0"');
    expect(empty.stdout).toContain('Approval rules: none');

    const set = await runCli(['controls', 'set', await jsonFile({ approvalRules: [EUR_RULE] })], admin.env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('ETag: "1"');
    expect(set.stdout).toContain('EUR payments');

    // JSON: the document alone, as `set` takes it back; the ETag on standard error.
    const read = await runCli(['controls', 'get', '--format', 'json'], admin.env);
    expect(read.code, read.stderr).toBe(0);
    expect(JSON.parse(read.stdout)).toEqual({ approvalRules: [EUR_RULE], approvalExpiry: 'P7D', limits: [] });
    expect(read.stderr).toContain('ETag: "1"');

    const named = await runCli(
      ['controls', 'set', await jsonFile({ approvalExpiry: 'P1D' }), '--if-match', '"1"', '--format', 'json'],
      admin.env,
    );
    expect(named.code, named.stderr).toBe(0);
    expect(JSON.parse(named.stdout)).toMatchObject({ approvalRules: [], approvalExpiry: 'P1D' });
    expect(named.stderr).toContain('ETag: "2"');

    const stale = await runCli(
      ['controls', 'set', await jsonFile({ approvalRules: [] }), '--if-match', '"1"'],
      admin.env,
    );
    expect(stale.code).toBe(1);
    expect(stale.stderr.trim().split('\n')).toHaveLength(1);
    expect(stale.stderr).toContain('Not changed');
    expect(stale.stderr).toContain('controls get');
    expect(stale.stdout).toBe('');

    // Without --if-match once versions exist: the CLI names the current ETag itself.
    const current = await runCli(
      ['controls', 'set', await jsonFile({ approvalRules: [EUR_RULE] })],
      admin.env,
    );
    expect(current.code, current.stderr).toBe(0);
    expect(current.stdout).toContain('Stored, replacing ETag "2"');
    expect(current.stdout).toContain('ETag: "3"');

    const versions = await runCli(['controls', 'versions', '--format', 'json'], admin.env);
    expect(versions.code, versions.stderr).toBe(0);
    expect(
      (JSON.parse(versions.stdout) as { version: number; clientId: string }[]).map(
        ({ version, clientId }) => [version, clientId],
      ),
    ).toEqual([
      [3, admin.clientId],
      [2, admin.clientId],
      [1, admin.clientId],
    ]);
  });
});

describe('CLI: approvals', () => {
  it('pending lists what this client has still to decide; approve and reject decide it', async () => {
    const { initiator, first, second, admin } = await tenant();
    await admin.sdk.paymentControls.put({ approvalRules: [EUR_RULE] });
    const held = await initiator.sdk.initiate(transfer());
    const other = await initiator.sdk.initiate(transfer({ amount: '2500.00' }));
    const notHeld = await initiator.sdk.initiate(transfer({ currency: 'USD' }));
    expect([held.status, other.status, notHeld.status]).toEqual(['Pending', 'Pending', 'Received']);

    const pendingOf = async (who: Member) => {
      const result = await runCli(['pending', '--format', 'json'], who.env);
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { paymentId: string }[]).map((entry) => entry.paymentId).sort();
    };
    expect(await pendingOf(first)).toEqual([held.paymentId, other.paymentId].sort());
    // The initiator holds transactions:approve too: its own transfers are not its to decide.
    expect(await pendingOf(initiator)).toEqual([]);
    expect(held.approval?.initiatingClientId).toBe(initiator.clientId);

    const approved = await runCli(
      ['approve', held.paymentId, '--reason', 'invoice 4711', '--format', 'json'],
      first.env,
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      paymentId: held.paymentId,
      status: 'Pending',
      approval: { approvals: [{ clientId: first.clientId, decision: 'approve', reason: 'invoice 4711' }] },
    });
    // Decided by the first approver: no longer its to decide, still the second's.
    expect(await pendingOf(first)).toEqual([other.paymentId]);
    expect(await pendingOf(second)).toEqual([held.paymentId, other.paymentId].sort());

    // The table: a line per transfer, with the rule and how far its approvals are.
    const table = await runCli(['pending'], second.env);
    expect(table.code, table.stderr).toBe(0);
    const heldLine = table.stdout.split('\n').find((line) => line.startsWith(held.paymentId));
    expect(heldLine).toContain('EUR payments');
    expect(heldLine).toContain('1/2');

    const rejected = await runCli(['reject', other.paymentId, '--reason', 'unknown supplier'], second.env);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout).toContain('Rejected');
    expect((await second.sdk.status(other.paymentId)).report.status).toBe('Rejected');
    expect(await pendingOf(second)).toEqual([held.paymentId]);

    const approvedAgain = await runCli(['approve', held.paymentId], second.env);
    expect(approvedAgain.code, approvedAgain.stderr).toBe(0);
    expect(await pendingOf(second)).toEqual([]);
    expect((await second.sdk.status(held.paymentId)).report.status).toBe('Received');

    // The service's refusal, in one line.
    const late = await runCli(['approve', other.paymentId], first.env);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('payment_not_pending');
  });

  it('approve takes a paymentId or --batch, not both and not neither', async () => {
    const { first } = await tenant();
    for (const args of [['approve'], ['approve', randomUUID(), '--batch', randomUUID()]]) {
      const result = await runCli(args, first.env);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain('a paymentId or --batch');
    }
  });

  it('--help lists the approval and controls commands', async () => {
    const help = await runCli(['--help'], {});
    expect(help.code).toBe(0);
    for (const command of ['approve', 'reject', 'pending', 'controls'])
      expect(help.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    const controls = await runCli(['controls', '--help'], {});
    for (const command of ['get', 'set', 'versions', 'usage'])
      expect(controls.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
  });
});
