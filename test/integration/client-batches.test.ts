import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreditTransfersClient } from '../../client/src/index.ts';
import { cliEnv, runCli } from '../client/cli-process.ts';
import { expectValidIso20022 } from '../support/iso20022-schemas.ts';
import { LOCAL_CLIENT } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually } from './support/webhook-receiver.ts';

const service = useLocalService();
let folder: string;
let client: CreditTransfersClient;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'client-batches-'));
  client = new CreditTransfersClient({ baseUrl: service.baseUrl, ...LOCAL_CLIENT });
});
afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

const payroll = async (messageId: string) =>
  (await readFile('examples/pain.001.001.09.xml', 'utf8'))
    .replaceAll('2026-12-01', new Date().toISOString().slice(0, 10))
    .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>${messageId}</MsgId>`);

describe('the SDK: batches, references, notifications', () => {
  it('lists batches, finds a batch by message id and a transfer by end-to-end id, fetches camt.054 notifications; says when a submission was a replay', async () => {
    const messageId = `SDK-${Date.now()}`;
    const xml = await payroll(messageId);
    const accepted = await client.submitBatch(xml, { idempotencyId: `sdk-${messageId}` });
    expect(accepted.replayed).toBe(false);
    const again = await client.submitBatch(xml, { idempotencyId: `sdk-${messageId}` });
    expect(again.replayed).toBe(true);
    expect(again.batchId).toBe(accepted.batchId);

    const [found] = (await client.batchesPage({ 'messageId.eq': messageId })).items;
    expect(found).toMatchObject({ batchId: accepted.batchId, messageId, count: 3 });
    const newest = [];
    for await (const batch of client.batches({}, { limit: 1 })) {
      newest.push(batch.batchId);
      if (newest.length === 2) break;
    }
    expect(newest[0]).toBe(accepted.batchId);

    const [transfer] = await client.findByEndToEndId('E2E-SAL-DEC-0001');
    expect(transfer).toBeDefined();
    const ours = (await client.findByEndToEndId('E2E-SAL-DEC-0002')).map((item) => item.paymentId);
    expect(ours).toContain(accepted.creditTransfers[1]?.paymentId);

    await eventually(async () => {
      const batch = await client.batch(accepted.batchId);
      return batch.status === 'Completed' ? batch : undefined;
    }, `batch ${accepted.batchId} completed`);
    const camt = await client.batchNotification(accepted.batchId);
    await expectValidIso20022(camt, 'camt.054.001.08');
    // The example's payroll group does not say BtchBookg: booked as one batch entry of both salaries.
    expect(camt.match(/<Ntry>/g)).toHaveLength(1);
    expect(camt.match(/<TxDtls>/g)).toHaveLength(2);
    const own = await client.notification(accepted.creditTransfers[0]?.paymentId as string);
    await expectValidIso20022(own, 'camt.054.001.08');
    expect(own).toContain('<EndToEndId>E2E-SAL-DEC-0001</EndToEndId>');
  });
});

describe('the CLI: batches', () => {
  const env = () => cliEnv(service.baseUrl, LOCAL_CLIENT);

  it('answers --version with the package version', async () => {
    const result = await runCli(['--version'], env());
    expect(result.code, result.stderr).toBe(0);
    const { version } = JSON.parse(await readFile('client/package.json', 'utf8')) as { version: string };
    expect(result.stdout.trim()).toBe(version);
  });

  it('batch submit --wait prints the outcome (PART) and says when the same file again was a replay; batch list and the notifications', async () => {
    const messageId = `CLI-OUTCOME-${Date.now()}`;
    const path = join(folder, 'payroll.xml');
    await writeFile(path, await payroll(messageId));
    const first = await runCli(
      ['batch', 'submit', path, '--wait', '--timeout', '120s', '--format', 'json'],
      env(),
    );
    expect(first.code, first.stderr).toBe(0);
    const outcome = JSON.parse(first.stdout);
    expect(outcome).toMatchObject({ status: 'Completed', groupStatus: 'PART', replayed: false, count: 3 });
    expect(first.stderr).not.toContain('replay');

    const again = await runCli(['batch', 'submit', path, '--wait', '--timeout', '120s'], env());
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`Batch ${outcome.batchId} was submitted before: this answer is a replay`);
    expect(again.stderr).toContain(`Batch ${outcome.batchId} Completed PART (replayed submission)`);

    const listed = await runCli(['batch', 'list', '--messageId.eq', messageId, '--format', 'json'], env());
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ batchId: outcome.batchId, status: 'Completed', groupStatus: 'PART' }),
    ]);

    const camt = await runCli(['batch', 'notification', outcome.batchId], env());
    expect(camt.code, camt.stderr).toBe(0);
    await expectValidIso20022(camt.stdout, 'camt.054.001.08');

    const byReference = await runCli(['list', '--endToEndId.eq', 'INV-2026-0457', '--format', 'json'], env());
    expect(byReference.code, byReference.stderr).toBe(0);
    const refused = (JSON.parse(byReference.stdout) as { paymentId: string; status: string }[])[0];
    expect(refused?.status).toBe('Rejected');
    const single = await runCli(['notification', refused?.paymentId as string], env());
    expect(single.code, single.stderr).toBe(0);
    await expectValidIso20022(single.stdout, 'camt.054.001.08');
    expect(single.stdout).not.toContain('<Ntry>');
  }, 240_000);
});
