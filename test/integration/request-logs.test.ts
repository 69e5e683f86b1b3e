import { connect } from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, LOCAL_CLIENT, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * Locally every request, authorizer call and workflow task runs in one process, many at once:
 * each log line still carries its own invocation's context only, as each Lambda invocation's does.
 */

const TRANSFERS = '/v1/payments/credit-transfers';
const OTHER = { clientId: 'logs-other', clientSecret: 'logs-other-secret-0123456789', tenant: 'logs-other' };

const service = useLocalService({ env: { POWERTOOLS_LOG_LEVEL: 'DEBUG' } });

beforeAll(async () => {
  await createClient(service, { ...OTHER, scope: 'transactions:read transactions:write' });
});

type LogLine = Record<string, unknown>;

const logLines = (): LogLine[] =>
  service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });

it("keeps each request's and each workflow step's log lines to their own tenant, client and payment", async () => {
  const tenants = [
    { tenant: 'local', clientId: LOCAL_CLIENT.clientId, secret: LOCAL_CLIENT.clientSecret },
    { tenant: OTHER.tenant, clientId: OTHER.clientId, secret: OTHER.clientSecret },
  ];
  const tokens = await Promise.all(
    tenants.map(({ clientId, secret }) =>
      requestToken(service.baseUrl, 'transactions:read transactions:write', {
        clientId,
        clientSecret: secret,
      }),
    ),
  );
  const paymentsOf = new Map<string, Set<string>>(tenants.map(({ tenant }) => [tenant, new Set()]));
  // Both tenants at once: initiations, and status reads of each new transfer while its workflow runs.
  await Promise.all(
    tenants.flatMap(({ tenant }, index) =>
      Array.from({ length: 30 }, async () => {
        const token = tokens[index] as string;
        const created = await callApi(service.baseUrl, TRANSFERS, { token, body: minimalCreditTransfer() });
        expect(created.status).toBe(202);
        paymentsOf.get(tenant)?.add(created.body.paymentId);
        for (let read = 0; read < 3; read++) {
          await callApi(service.baseUrl, `${TRANSFERS}/${created.body.paymentId}/status`, { token });
        }
      }),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 3000));

  const lines = logLines();
  // Every request on the API's own routes: each carries its own caller, and only its own.
  const requests = lines.filter(
    (line) => line.message === 'Request handled' && String(line.resource).startsWith('/v1/'),
  );
  expect(requests.length).toBeGreaterThanOrEqual(2 * 30 * 4);
  const misplaced: LogLine[] = [];
  for (const line of requests) {
    const own = tenants.find(({ clientId }) => clientId === line.clientId);
    const wrong =
      own === undefined ||
      line.tenant !== own.tenant ||
      // A request line is no workflow step's.
      line.step !== undefined ||
      (line.paymentId !== undefined && !paymentsOf.get(own.tenant)?.has(String(line.paymentId)));
    if (wrong) misplaced.push(line);
  }
  // Lines of workflow steps carry their own transfer, and no request's client.
  for (const line of lines.filter((entry) => entry.step !== undefined)) {
    const tenant = String(line.tenant);
    if (line.clientId !== undefined || !paymentsOf.get(tenant)?.has(String(line.paymentId)))
      misplaced.push(line);
  }
  expect(misplaced).toEqual([]);
}, 180_000);

it('logs a client that goes away mid-request as one debug line, without a stack trace', async () => {
  const before = service.output().length;
  const { hostname, port } = new URL(service.serviceUrl);
  await new Promise<void>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        'POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"grant_',
      );
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 200);
    });
    socket.on('error', reject);
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));

  const after = service.output().slice(before);
  const lines = after.split('\n').filter((line) => line.trim() !== '');
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0] ?? '{}') as LogLine;
  expect(line).toMatchObject({ level: 'DEBUG', method: 'POST', path: '/oauth/token' });
  expect(after).not.toMatch(/\n\s+at /);
});
