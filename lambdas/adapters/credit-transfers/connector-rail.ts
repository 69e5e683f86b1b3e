import { createHash, createHmac } from 'node:crypto';
import type {
  ClearingStatus,
  CustomerProfileCheck,
  Rail,
  RailPayment,
  RailRefusal,
} from '#domain/credit-transfers/ports';
import { NARRATIVE_REASON_CODE, statusReasonNameOf } from '#domain/iso20022/status-codes';
import { logger } from '#shared/logger';
import { countUnknownStatusReasonCode } from '#shared/metrics';
import {
  CONNECTOR_OPERATIONS,
  type ConnectorOperation,
  IDEMPOTENCY_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from './connector-contract.ts';

/**
 * The rail of stages without the sandbox: the bank's systems behind its connector (the contract
 * in connector-contract.ts, published as docs/connector-openapi.json). Every call is signed,
 * idempotent by paymentId, bounded by a timeout and retried with backoff. What it never does is
 * turn a fault into a refusal: only an answer the contract calls a refusal rejects a payment;
 * anything else throws, the workflow retries the step, and the reconciler drives the transfer
 * again later, where the stuck-transfer alarm sees it if the connector stays away.
 */
export interface ConnectorSettings {
  baseUrl: URL;
  /** One attempt's limit. */
  timeoutMs: number;
  maxAttempts: number;
  /** First backoff; each retry doubles it, with full jitter. */
  backoffMs: number;
  /** No attempt starts that could not end by then: the step must finish inside its function's timeout. */
  deadlineMs: number;
}

/** The shared HMAC key; read when needed, so a rotated secret takes effect. */
export type SigningKeySource = () => Promise<string>;

/** The connector could not be reached, timed out or kept failing: the step is retried later. */
export class ConnectorUnavailableError extends Error {
  constructor(operation: ConnectorOperation, paymentId: string, cause: string) {
    super(`Connector ${operation} of ${paymentId} failed: ${cause}`);
    this.name = 'ConnectorUnavailableError';
  }
}

/** The connector answered outside its contract (a refused request, or a body the contract does not allow). */
export class ConnectorProtocolError extends Error {
  constructor(operation: ConnectorOperation, paymentId: string, cause: string) {
    super(`Connector ${operation} of ${paymentId} answered outside the contract: ${cause}`);
    this.name = 'ConnectorProtocolError';
  }
}

const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_RETRY_AFTER_MS = 2000;

/** `v1=` HMAC-SHA256 over timestamp, method, path and the body's SHA-256, one per line. */
export const connectorSignature = (
  key: string,
  request: { timestamp: string; method: string; path: string; body: string },
): string => {
  const bodyDigest = createHash('sha256').update(request.body).digest('hex');
  const signed = [request.timestamp, request.method, request.path, bodyDigest].join('\n');
  return `v1=${createHmac('sha256', key).update(signed).digest('hex')}`;
};

type Attempt =
  | { ok: true; value: unknown }
  | { ok: false; retry: boolean; cause: string; retryAfterMs?: number };

const retryAfterMs = (header: string | null): number | undefined => {
  if (header === null || !/^\d{1,4}$/.test(header.trim())) return undefined;
  return Math.min(Number(header) * 1000, MAX_RETRY_AFTER_MS);
};

/** A refusal as the contract lets the connector word it: a reason, a code, or both. */
interface ConnectorRefusal {
  reason?: string;
  reasonCode?: string;
}

/**
 * The bank's code is passed through as given when it is one of ISO's ExternalStatusReason1Code (a
 * code alone takes its ISO name). A code outside the set is never passed on as ISO's: the refusal
 * becomes a narrative (NARR) with the connector's words (its reason, else its code), logged and
 * counted, since the connector needs fixing.
 */
const refusalOf = ({ reason, reasonCode }: ConnectorRefusal, paymentId: string): RailRefusal => {
  if (reasonCode === undefined) return { reason: reason ?? 'Narrative' };
  const name = statusReasonNameOf(reasonCode);
  if (name !== undefined) return { reason: reason ?? name, reasonCode };
  logger.warn('The connector answered a reason code outside ISO 20022 ExternalStatusReason1Code', {
    paymentId,
    reasonCode,
    reason,
  });
  countUnknownStatusReasonCode();
  return { reason: reason ?? reasonCode, reasonCode: NARRATIVE_REASON_CODE };
};

export class ConnectorRail implements Rail {
  constructor(
    private readonly settings: ConnectorSettings,
    private readonly signingKey: SigningKeySource,
    private readonly fetchFn: typeof fetch = fetch,
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  async checkCustomerProfile(payment: RailPayment): Promise<CustomerProfileCheck> {
    const result = (await this.call('checkCustomerProfile', payment)) as
      | { accepted: true }
      | ({ accepted: false } & ConnectorRefusal);
    return result.accepted
      ? { accepted: true }
      : { accepted: false, ...refusalOf(result, payment.paymentId) };
  }

  async submit(payment: RailPayment): Promise<void> {
    await this.call('submit', payment);
  }

  async clearingStatus(payment: RailPayment): Promise<ClearingStatus> {
    const result = (await this.call('clearingStatus', payment)) as
      | { state: 'unknown' | 'pending' | 'settled' | 'recalled' }
      | ({ state: 'rejected' } & ConnectorRefusal);
    return result.state === 'rejected'
      ? { state: 'rejected', ...refusalOf(result, payment.paymentId) }
      : { state: result.state };
  }

  async recall(payment: RailPayment): Promise<'recalled' | 'settled'> {
    return ((await this.call('recall', payment)) as { outcome: 'recalled' | 'settled' }).outcome;
  }

  private async call(operation: ConnectorOperation, payment: RailPayment): Promise<unknown> {
    const started = Date.now();
    const { timeoutMs, maxAttempts, backoffMs, deadlineMs } = this.settings;
    let last: Attempt = { ok: false, retry: true, cause: 'not attempted' };
    for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
      last = await this.attempt(operation, payment);
      if (last.ok) return last.value;
      logger.warn('Connector call failed', {
        operation,
        paymentId: payment.paymentId,
        attempt,
        cause: last.cause,
        retry: last.retry,
      });
      if (!last.retry) throw new ConnectorProtocolError(operation, payment.paymentId, last.cause);
      if (attempt === maxAttempts) break;
      const backoff = last.retryAfterMs ?? Math.random() * backoffMs * 2 ** (attempt - 1);
      if (Date.now() - started + backoff + timeoutMs > deadlineMs) break;
      await this.sleep(backoff);
    }
    throw new ConnectorUnavailableError(operation, payment.paymentId, last.ok ? '' : last.cause);
  }

  private async attempt(operation: ConnectorOperation, payment: RailPayment): Promise<Attempt> {
    const contract = CONNECTOR_OPERATIONS[operation];
    const path = contract.path.replace('{paymentId}', encodeURIComponent(payment.paymentId));
    const url = new URL(path.slice(1), this.settings.baseUrl);
    const body =
      contract.request === undefined
        ? ''
        : JSON.stringify({
            paymentId: payment.paymentId,
            tenant: payment.tenant,
            clientId: payment.clientId,
            transfer: payment.transfer,
          });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = {
      accept: 'application/json',
      [IDEMPOTENCY_HEADER]: payment.paymentId,
      [TIMESTAMP_HEADER]: timestamp,
      [SIGNATURE_HEADER]: connectorSignature(await this.signingKey(), {
        timestamp,
        method: contract.method,
        path: url.pathname + url.search,
        body,
      }),
    };
    if (body !== '') headers['content-type'] = 'application/json';

    let response: Response;
    let text: string;
    try {
      response = await this.fetchFn(url, {
        method: contract.method,
        headers,
        body: body === '' ? undefined : body,
        signal: AbortSignal.timeout(this.settings.timeoutMs),
        redirect: 'error',
      });
      text = await response.text();
    } catch (error) {
      const name = (error as Error).name;
      return {
        ok: false,
        retry: true,
        cause: name === 'TimeoutError' ? 'timed out' : `unreachable (${name})`,
      };
    }

    const status = response.status;
    if (status === 408 || status === 429 || status >= 500) {
      return {
        ok: false,
        retry: true,
        cause: `HTTP ${status}`,
        retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
      };
    }
    // Any other refusal of the request itself is a contract or configuration fault (a wrong key,
    // an unknown path): repeating it now cannot help, and it is never the payment's refusal.
    if (status < 200 || status > 299) return { ok: false, retry: false, cause: `HTTP ${status}` };
    if (Buffer.byteLength(text) > MAX_RESPONSE_BYTES) {
      return { ok: false, retry: true, cause: 'answer larger than 64 KiB' };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, retry: true, cause: 'answer is not JSON' };
    }
    const parsed = contract.response.safeParse(json);
    // A garbled answer may be a proxy's page or a half-deployed connector: retried, never a refusal.
    if (!parsed.success) return { ok: false, retry: true, cause: 'answer does not match the contract' };
    return { ok: true, value: parsed.data };
  }
}
