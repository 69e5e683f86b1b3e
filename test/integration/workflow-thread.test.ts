import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '#local/runtime';
import { startWorkflowThread } from '#local/workflow-thread';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, LOCAL_CLIENT, removeDataDir, requestToken } from './support/local-service.ts';

/**
 * The local workflow runs in a worker thread of the server process (scripts/local/workflow-thread.ts).
 * Here the runtime runs in the test's own process, so the test can end that thread as a crash would.
 */
const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

let runtime: LocalRuntime | undefined;
let dataDir: string | undefined;

afterAll(async () => {
  await runtime?.stop();
  if (dataDir) await removeDataDir(dataDir);
});

const statuses = async (baseUrl: string, token: string, paymentIds: readonly string[]) =>
  Promise.all(
    paymentIds.map(async (id) => {
      const reply = await callApi(baseUrl, `${TRANSFERS}/${id}/status`, { token });
      return reply.status === 200 ? (reply.body.status as string) : `HTTP ${reply.status}`;
    }),
  );

it('drives every accepted transfer to a final state when the workflow thread dies mid-flight', async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'workflow-thread-'));
  // Clearing settles after 2 s, so the crash finds executions waiting on it.
  process.env.SANDBOX_SETTLEMENT_SECONDS = '2';
  runtime = await startLocalRuntime({
    host: '127.0.0.1',
    port: 0,
    dynamodbPort: 0,
    dataDir,
    tableName: 'credit-transfers',
    client: { ...LOCAL_CLIENT, tenant: 'local' },
  });
  const { baseUrl, workflow } = runtime;
  if (!workflow) throw new Error('the runtime started without its workflow thread');
  const token = await requestToken(baseUrl, 'transactions:read transactions:write');
  const initiate = (count: number, from: number) =>
    Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const reply = await callApi(baseUrl, TRANSFERS, {
          token,
          body: minimalCreditTransfer({ amount: `${from + index + 1}.00` }),
        });
        expect(reply.status).toBe(202);
        return reply.body.paymentId as string;
      }),
    );

  const before = await initiate(20, 0);
  await workflow.crash();
  // Accepted while the thread is down or starting again.
  const during = await initiate(20, 20);
  const accepted = [...before, ...during];

  const deadline = Date.now() + 60_000;
  let open = accepted;
  while (open.length > 0 && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 500));
    const now = await statuses(baseUrl, token, open);
    open = open.filter((_, index) => !FINAL.has(now[index] as string));
  }
  expect(workflow.restarts).toBe(1);
  expect(open).toEqual([]);
}, 120_000);

it('refuses to start, saying why, when the workflow thread cannot start', async () => {
  // No lifecycle definition under this root: the thread fails while loading it.
  const missingRoot = resolve(tmpdir(), 'no-such-project');
  await expect(
    startWorkflowThread({ projectRoot: missingRoot, dataDir: tmpdir(), reconcileIntervalSeconds: 15 }),
  ).rejects.toThrow(/credit-transfer-lifecycle\.asl\.json/);
});
