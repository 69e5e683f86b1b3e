import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import {
  CONNECTOR_OPERATIONS,
  type ConnectorOperation,
  IDEMPOTENCY_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from '#adapters/credit-transfers/connector-contract';
import { connectorSignature } from '#adapters/credit-transfers/connector-rail';
import { statusReasonNameOf } from '#domain/iso20022/status-codes';

/**
 * The connector conformance kit: what a bank runs against its own connector before the service
 * is pointed at it (`npm run connector:check`). Each check speaks the contract as the service does
 * (connector-contract.ts) and says what it found. It uses test payments of its own (fresh
 * paymentIds, tenant `conformance`): run it against the bank's test system, never production.
 */
export interface ConformanceOptions {
  url: string;
  secret: string;
  /** A debtor account the bank's test system accepts. */
  debtorAccountId: string;
  /** A debtor account its customer-profile check refuses, to check the refusal's reason code. */
  refusedDebtorAccountId?: string;
  /** Submissions of one payment sent at once. */
  concurrency?: number;
  timeoutMs?: number;
}

export interface CheckResult {
  name: string;
  passed: boolean;
  detail: string;
}

interface Reply {
  status: number;
  body: unknown;
}

const payment = (paymentId: string, debtorAccountId: string) => ({
  paymentId,
  tenant: 'conformance',
  clientId: 'conformance-kit',
  transfer: { paymentMethod: 'CreditTransfer', amount: '1.00', debtorAccountId },
});

/** One signed call of the contract; `signWith` replaces the key (the signature check). */
const call = async (
  options: ConformanceOptions,
  operation: ConnectorOperation,
  body: ReturnType<typeof payment>,
  signWith = options.secret,
): Promise<Reply> => {
  const contract = CONNECTOR_OPERATIONS[operation];
  const path = contract.path.replace('{paymentId}', encodeURIComponent(body.paymentId));
  const url = new URL(path.slice(1), options.url.endsWith('/') ? options.url : `${options.url}/`);
  const text = contract.request === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const response = await fetch(url, {
    method: contract.method,
    headers: {
      accept: 'application/json',
      ...(text !== '' && { 'content-type': 'application/json' }),
      [IDEMPOTENCY_HEADER]: body.paymentId,
      [TIMESTAMP_HEADER]: timestamp,
      [SIGNATURE_HEADER]: connectorSignature(signWith, {
        timestamp,
        method: contract.method,
        path: url.pathname + url.search,
        body: text,
      }),
    },
    body: text === '' ? undefined : text,
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    redirect: 'error',
  });
  const raw = await response.text();
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Kept as text: the check says it is not JSON.
  }
  return { status: response.status, body: parsed };
};

/** The answer as the contract allows it, or why not. */
const conforming = (operation: ConnectorOperation, reply: Reply): string | undefined => {
  if (reply.status < 200 || reply.status > 299) return `HTTP ${reply.status}`;
  const result = CONNECTOR_OPERATIONS[operation].response.safeParse(reply.body);
  return result.success ? undefined : `body outside the contract: ${z.prettifyError(result.error)}`;
};

const check = async (name: string, run: () => Promise<string | undefined>): Promise<CheckResult> => {
  try {
    const problem = await run();
    return { name, passed: problem === undefined, detail: problem ?? 'ok' };
  } catch (error) {
    return { name, passed: false, detail: `failed: ${(error as Error).message}` };
  }
};

export const runConformance = async (options: ConformanceOptions): Promise<CheckResult[]> => {
  const concurrency = options.concurrency ?? 5;
  const submitted = payment(randomUUID(), options.debtorAccountId);
  const results: CheckResult[] = [];

  results.push(
    await check('signature: a request signed with another key is refused', async () => {
      const reply = await call(options, 'checkCustomerProfile', submitted, `not-${options.secret}`);
      return reply.status === 401 || reply.status === 403
        ? undefined
        : `answered HTTP ${reply.status}: the connector must refuse it with 401 or 403`;
    }),
  );
  results.push(
    await check('customer-profile check of the test account: accepted', async () => {
      const reply = await call(options, 'checkCustomerProfile', submitted);
      const problem = conforming('checkCustomerProfile', reply);
      if (problem) return problem;
      return (reply.body as { accepted: boolean }).accepted
        ? undefined
        : `refused: ${JSON.stringify(reply.body)}`;
    }),
  );
  if (options.refusedDebtorAccountId !== undefined) {
    const refused = payment(randomUUID(), options.refusedDebtorAccountId);
    results.push(
      await check('customer-profile refusal: a reason, and an ISO 20022 code the code set has', async () => {
        const reply = await call(options, 'checkCustomerProfile', refused);
        const problem = conforming('checkCustomerProfile', reply);
        if (problem) return problem;
        const body = reply.body as { accepted: boolean; reason?: string; reasonCode?: string };
        if (body.accepted) return 'accepted: the account was expected to be refused';
        if (body.reasonCode !== undefined && statusReasonNameOf(body.reasonCode) === undefined)
          return `reasonCode ${body.reasonCode} is not in the ISO 20022 external code set`;
        return undefined;
      }),
    );
  }
  results.push(
    await check('status inquiry before submission: unknown', async () => {
      const reply = await call(options, 'clearingStatus', submitted);
      const problem = conforming('clearingStatus', reply);
      if (problem) return problem;
      const { state } = reply.body as { state: string };
      return state === 'unknown' ? undefined : `answered ${state} for a payment never submitted`;
    }),
  );
  results.push(
    await check(`submission sent ${concurrency} times at once: each accepted, the same answer`, async () => {
      const replies = await Promise.all(
        Array.from({ length: concurrency }, () => call(options, 'submit', submitted)),
      );
      for (const reply of replies) {
        const problem = conforming('submit', reply);
        if (problem) return problem;
      }
      return undefined;
    }),
  );
  results.push(
    await check('status inquiry after submission: clearing has the payment', async () => {
      const reply = await call(options, 'clearingStatus', submitted);
      const problem = conforming('clearingStatus', reply);
      if (problem) return problem;
      const { state } = reply.body as { state: string };
      return state === 'unknown' ? 'answered unknown for a submitted payment' : undefined;
    }),
  );
  results.push(
    await check('submission repeated later: accepted, the same payment', async () => {
      const problem = conforming('submit', await call(options, 'submit', submitted));
      if (problem) return problem;
      const after = await call(options, 'clearingStatus', submitted);
      return conforming('clearingStatus', after);
    }),
  );
  results.push(
    await check('recall of the submitted payment: recalled or settled', async () =>
      conforming('recall', await call(options, 'recall', submitted)),
    ),
  );
  return results;
};
