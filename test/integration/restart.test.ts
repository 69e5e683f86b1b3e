import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { collectOutput } from '#local/service-process';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import {
  callApi,
  removeDataDir,
  requestToken,
  socketAnswers,
  socketGone,
  startLocalService,
} from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const service = useLocalService({ token: 'transactions:read transactions:write' });

it('keeps clients, payments and the signing key across a restart', async () => {
  const { token } = service;
  const created = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token,
    body: minimalCreditTransfer({ amount: '42.00' }),
    headers: { idempotencyId: 'restart-key' },
  });
  expect(created.status).toBe(202);
  const keysBefore = (await callApi(service.baseUrl, '/.well-known/jwks.json')).body;

  await service.stop();
  // Same port as before: the issuer is the base URL, as it would be for a user restarting `npm start`.
  await service.startAgain({ samePort: true });

  // A token issued before the restart still verifies: the signing key was kept.
  const reply = await callApi(
    service.baseUrl,
    `/v1/payments/credit-transfers/${created.body.paymentId}/status`,
    {
      token,
    },
  );
  expect(reply.status).toBe(200);
  expect(reply.body.paymentId).toBe(created.body.paymentId);
  expect(reply.body.amount).toBe('42.00');
  expect((await callApi(service.baseUrl, '/.well-known/jwks.json')).body).toEqual(keysBefore);

  // The idempotency key was kept too: the same request replays instead of paying twice.
  const replay = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
    token,
    body: minimalCreditTransfer({ amount: '42.00' }),
    headers: { idempotencyId: 'restart-key' },
  });
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.body.paymentId).toBe(created.body.paymentId);

  // And the client registered at the first start can still get tokens.
  await expect(requestToken(service.baseUrl)).resolves.toBeTypeOf('string');
});

it('stops dynalite with the service on SIGTERM, leaving nothing on its socket', async () => {
  const running = await startLocalService();
  const health = await fetch(`${running.baseUrl}/health`);
  expect(health.status).toBe(200);
  const socket = running.tableSocket;
  expect(await socketAnswers(socket)).toBe(true);
  await running.stop();
  expect(await socketAnswers(socket)).toBe(false);
  await removeDataDir(running.dataDir);
});

it('stops the service and dynalite when the npm process above them is killed outright', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'credit-transfers-npm-'));
  const npm = spawn('npm', ['start'], {
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collectOutput(npm);
  const deadline = Date.now() + 60_000;
  while (!/DynamoDB \(dynalite\):\s+\S+/.test(output())) {
    if (Date.now() > deadline) throw new Error(`npm start did not start:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const baseUrl = /listening on (\S+)/.exec(output())?.[1] as string;
  const dynamodb = /DynamoDB \(dynalite\):\s+(\S+)/.exec(output())?.[1] as string;
  expect((await fetch(`${baseUrl}/health`)).status).toBe(200);

  npm.kill('SIGKILL');
  const gone = async (url: string) => {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        await fetch(url);
      } catch {
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return false;
  };
  expect(await gone(`${baseUrl}/health`)).toBe(true);
  expect(await socketGone(dynamodb)).toBe(true);
  await removeDataDir(dataDir);
});
