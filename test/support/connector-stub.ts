import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '#adapters/credit-transfers/connector-contract';
import { connectorSignature } from '#adapters/credit-transfers/connector-rail';

/**
 * A bank's connector on loopback for tests: it checks every request's signature, keeps one
 * clearing record per paymentId (so repeated submissions change nothing), and can be made to
 * refuse, be slow, answer garbage or go away.
 */
export type StubMode = 'normal' | 'slow' | 'garbage' | 'error' | 'unauthorized';

export interface ReceivedCall {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  signatureValid: boolean;
}

export interface ConnectorStub {
  url: string;
  calls: ReceivedCall[];
  mode: StubMode;
  /** Debtor account ids the customer-profile check refuses, with the reason. */
  /** Refusals by debtor account: a reason name, or the refusal's fields (`reason`, `reasonCode`). */
  refusals: Map<string, string | { reason?: string; reasonCode?: string }>;
  /** Payments clearing rejects after submission, with the reason. */
  clearingRejections: Map<string, string>;
  /** Submitted payments, by paymentId, with how often each was submitted. */
  submissions: Map<string, number>;
  slowMs: number;
  /**
   * Milliseconds an operation (`customer-profile-check`, `submission`) takes to answer. A
   * submission counts (clearing has the payment) when it arrives, before the wait.
   */
  delays: Map<string, number>;
  /** Faults of a connector that breaks the contract, for the conformance kit's own tests. */
  faults: { ignoresSignatures?: boolean; statusOfUnknownAs404?: boolean };
  /** Stops listening (connections refused) but keeps its port and records. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};

export const startConnectorStub = async (key: string): Promise<ConnectorStub> => {
  const recalled = new Set<string>();
  let server: Server | undefined;
  let port = 0;
  const stub: ConnectorStub = {
    url: '',
    calls: [],
    mode: 'normal',
    refusals: new Map(),
    clearingRejections: new Map(),
    submissions: new Map(),
    slowMs: 5000,
    delays: new Map(),
    faults: {},
    down: async () => {
      const current = server;
      server = undefined;
      if (current) {
        current.closeAllConnections();
        await new Promise<void>((resolve) => current.close(() => resolve()));
      }
    },
    up: async () => {
      if (server) return;
      server = createServer((request, response) => void handle(request, response));
      await new Promise<void>((resolve) => server?.listen(port, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
      stub.url = `http://127.0.0.1:${port}/connector/`;
    },
    close: () => stub.down(),
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const body = await readBody(request);
    const path = request.url ?? '';
    const timestamp = String(request.headers[TIMESTAMP_HEADER] ?? '');
    const signatureValid =
      request.headers[SIGNATURE_HEADER] ===
      connectorSignature(key, { timestamp, method: request.method ?? '', path, body });
    const idempotencyKey = request.headers['idempotency-key'] as string | undefined;
    stub.calls.push({ method: request.method ?? '', path, idempotencyKey, signatureValid });
    if ((!signatureValid && !stub.faults.ignoresSignatures) || stub.mode === 'unauthorized')
      return json(response, 401, { error: 'bad signature' });
    if (stub.mode === 'slow') await new Promise((resolve) => setTimeout(resolve, stub.slowMs));
    if (stub.mode === 'garbage') {
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end('<html>gateway says hello</html>');
    }
    if (stub.mode === 'error') return json(response, 503, { error: 'maintenance' });

    const match = /^\/connector\/payments\/([^/]+)\/([a-z-]+)$/.exec(path);
    if (!match) return json(response, 404, { error: 'no such path' });
    const paymentId = decodeURIComponent(match[1] ?? '');
    const operation = match[2];
    const payment = body === '' ? undefined : (JSON.parse(body) as { transfer: { debtorAccountId: string } });
    const delay = () => new Promise((resolve) => setTimeout(resolve, stub.delays.get(operation ?? '') ?? 0));
    if (operation === 'customer-profile-check' && request.method === 'POST' && payment) {
      await delay();
      const refusal = stub.refusals.get(payment.transfer.debtorAccountId);
      if (refusal === undefined) return json(response, 200, { accepted: true });
      return json(response, 200, {
        accepted: false,
        ...(typeof refusal === 'string' ? { reason: refusal } : refusal),
      });
    }
    if (operation === 'submission' && request.method === 'PUT') {
      stub.submissions.set(paymentId, (stub.submissions.get(paymentId) ?? 0) + 1);
      await delay();
      return json(response, 200, { accepted: true });
    }
    if (operation === 'clearing-status' && request.method === 'GET') {
      if (!stub.submissions.has(paymentId))
        return stub.faults.statusOfUnknownAs404
          ? json(response, 404, { error: 'not submitted' })
          : json(response, 200, { state: 'unknown' });
      if (recalled.has(paymentId)) return json(response, 200, { state: 'recalled' });
      const reason = stub.clearingRejections.get(paymentId);
      return json(response, 200, reason === undefined ? { state: 'settled' } : { state: 'rejected', reason });
    }
    if (operation === 'recall' && request.method === 'POST') {
      recalled.add(paymentId);
      return json(response, 200, { outcome: 'recalled' });
    }
    return json(response, 404, { error: 'no such operation' });
  };

  await stub.up();
  return stub;
};
