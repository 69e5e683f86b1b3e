import * as z from 'zod/mini';
import { STATUS_REASON_CODE_PATTERN } from '#domain/iso20022/status-codes';

/**
 * The connector contract: the small HTTPS API a bank implements so the workflow can reach its
 * customer-profile checks and clearing. These schemas are the single source of the contract:
 * the connector rail validates every answer with them, and `npm run connector:openapi` writes
 * `docs/connector-openapi.json` from them.
 */

/** Reasons follow ISO 20022 status reason names: letters only, as `statusReason` shows them. */
export const connectorReasonSchema = z
  .string()
  .check(z.maxLength(35), z.regex(/^[A-Za-z]{1,35}$/))
  .register(z.globalRegistry, {
    description: 'Why the bank refuses the payment, as an ISO 20022 status reason name (e.g. BlockedAccount)',
    examples: ['InsufficientFunds'],
  });

/** What the service sends about a payment, the same body on every call that has one. */
export const connectorPaymentSchema = z
  .object({
    paymentId: z.string().check(z.maxLength(36)).register(z.globalRegistry, {
      description: 'The payment (a UUID); every call is idempotent by it',
    }),
    tenant: z.string().check(z.maxLength(64)).register(z.globalRegistry, {
      description: 'The platform tenant the client belongs to',
    }),
    clientId: z.string().check(z.maxLength(64)).register(z.globalRegistry, {
      description: 'The API client that initiated the payment',
    }),
    transfer: z.looseObject({}).register(z.globalRegistry, {
      description: "The credit transfer exactly as the client initiated it (the API's CreditTransfer fields)",
    }),
  })
  .register(z.globalRegistry, { id: 'ConnectorPayment' });

/** The bank's own ISO code for the refusal, passed through to clients as `statusReasonCode`. */
export const connectorReasonCodeSchema = z
  .string()
  .check(z.regex(STATUS_REASON_CODE_PATTERN), z.maxLength(4))
  .register(z.globalRegistry, {
    description:
      'Why the bank refuses the payment, as an ISO 20022 ExternalStatusReason1Code (e.g. AM04); shown to the ' +
      "client as given. A code outside ISO's set is reported as NARR (narrative) with `reason` (or the code) as " +
      'its text. Without it the service reports the code of `reason` (NARR for a reason ISO does not name).',
    examples: ['AM04'],
  });

const refusalFields = {
  reason: z.optional(connectorReasonSchema),
  reasonCode: z.optional(connectorReasonCodeSchema),
};

/** A refusal names its reason, its code, or both. */
const namesItsReason = z.refine<{ reason?: string | undefined; reasonCode?: string | undefined }>(
  (value) => value.reason !== undefined || value.reasonCode !== undefined,
  'a refusal needs reason, reasonCode, or both',
);

export const customerProfileCheckResultSchema = z
  .union([
    z.object({ accepted: z.literal(true) }),
    z.object({ accepted: z.literal(false), ...refusalFields }).check(namesItsReason),
  ])
  .register(z.globalRegistry, {
    id: 'CustomerProfileCheckResult',
    description: 'Accepted, or refused with its reason (account status, ownership, funds, screening)',
  });

export const submissionResultSchema = z.object({ accepted: z.literal(true) }).register(z.globalRegistry, {
  id: 'SubmissionResult',
  description:
    'Clearing has the payment. A repeated submission of the same paymentId (the service retrying a call ' +
    'that timed out, or two at once) changes nothing and answers the same: the payment is submitted once',
});

export const clearingStatusResultSchema = z
  .union([
    z.object({ state: z.enum(['unknown', 'pending', 'settled', 'recalled']) }),
    z.object({ state: z.literal('rejected'), ...refusalFields }).check(namesItsReason),
  ])
  .register(z.globalRegistry, {
    id: 'ClearingStatusResult',
    description:
      'Where clearing stands with the payment; `unknown` when it has no submission of this paymentId ' +
      '(the service then may submit it again, so answer `unknown` only when clearing certainly lacks it)',
  });

export const recallResultSchema = z
  .object({ outcome: z.enum(['recalled', 'settled']) })
  .register(z.globalRegistry, {
    id: 'RecallResult',
    description: '`recalled`: clearing took the payment back; `settled`: too late, it settled',
  });

export const CONNECTOR_OPERATIONS = {
  checkCustomerProfile: {
    method: 'POST',
    path: '/payments/{paymentId}/customer-profile-check',
    summary: 'Check the debtor: account status, ownership, funds and screening',
    request: connectorPaymentSchema,
    response: customerProfileCheckResultSchema,
  },
  submit: {
    method: 'PUT',
    path: '/payments/{paymentId}/submission',
    summary: 'Submit the payment to clearing (idempotent by paymentId)',
    request: connectorPaymentSchema,
    response: submissionResultSchema,
  },
  clearingStatus: {
    method: 'GET',
    path: '/payments/{paymentId}/clearing-status',
    summary: 'Where clearing stands with a payment (status inquiry), or that it has none',
    request: undefined,
    response: clearingStatusResultSchema,
  },
  recall: {
    method: 'POST',
    path: '/payments/{paymentId}/recall',
    summary: 'Ask clearing to take the payment back before it settles (idempotent by paymentId)',
    request: connectorPaymentSchema,
    response: recallResultSchema,
  },
} as const;

export type ConnectorOperation = keyof typeof CONNECTOR_OPERATIONS;

/** Request signing: HMAC-SHA256 with the shared key over these lines, joined by "\n". */
export const SIGNATURE_HEADER = 'x-connector-signature';
export const TIMESTAMP_HEADER = 'x-connector-timestamp';
export const IDEMPOTENCY_HEADER = 'idempotency-key';
