import type { ErrorCode, ProblemBody } from '#shared/problem';
import { problemBody } from '#shared/problem';

/**
 * Realistic examples for the OpenAPI document: one for every component schema, and the bodies
 * the reference page shows for each operation. Values come from the spec's lists (paymentReason
 * from 2.1.1, chargeBearerType, paymentType), ISO 4217 and ISO 3166 codes, and check-digit-valid
 * IBANs (the published examples of their national registries). Unit tests parse each one with the
 * schema that validates requests and answers, so an example cannot drift from the contract.
 *
 * `{publicUrl}` is the document's server variable: the service writes its configured public URL
 * in its place when it serves the document (lambdas/api/openapi-document.ts).
 */

export const PUBLIC_URL = '{publicUrl}';

const DEBTOR_IBAN = 'DE89370400440532013000';
const CREDITOR_IBAN = 'FR1420041010050500013M02606';

export const PAYMENT_IDENTIFICATION_EXAMPLE = {
  number: 'E2E-2026-000118',
  schemeName: 'EndToEndId',
  issuer: 'Acme Trading GmbH',
};

export const GENERIC_TRANSACTION_CODE_EXAMPLE = {
  codeType: 'ISO20022',
  name: 'BankTransactionCode',
  value: 'PMNT-ICDT-ESCT',
};

export const PARTY_IDENTIFIER_EXAMPLE = {
  number: 'FR40303265045',
  schemeName: 'VATRegistrationNumber',
  issuer: 'FR',
  issueDate: '2019-03-01',
  expirationDate: '2029-02-28',
};

export const POSTAL_ADDRESS_EXAMPLE = {
  addressType: 'Business',
  streetName: 'Rue de la Paix',
  buildingNumber: '12',
  postCode: '75002',
  townName: 'Paris',
  country: 'FR',
  addressLine: ['12 Rue de la Paix', '75002 Paris'],
  primaryIndicator: true,
};

export const AGENT_IDENTIFIER_EXAMPLE = {
  number: 'BNPAFRPPXXX',
  schemeName: 'BIC',
  issuer: 'SWIFT',
  country: 'FR',
  issueDate: '2001-01-01',
  foreingIDIndicator: false,
  taxIDIndicator: false,
};

export const AGENT_EXAMPLE = {
  identifiers: [AGENT_IDENTIFIER_EXAMPLE],
  name: 'BNP Paribas',
  postalAddress: {
    streetName: 'Boulevard des Italiens',
    buildingNumber: '16',
    postCode: '75009',
    townName: 'Paris',
    country: 'FR',
  },
};

export const ACCOUNT_EXAMPLE = {
  name: 'Fournitures Dupont SARL',
  currency: 'EUR',
  accountType: 'Current',
  identifiers: [{ number: CREDITOR_IBAN, schemeName: 'IBAN', issuer: 'FR' }],
};

export const PARTY_IDENTIFICATION_EXAMPLE = {
  name: 'Fournitures Dupont SARL',
  account: ACCOUNT_EXAMPLE,
  postalAddress: POSTAL_ADDRESS_EXAMPLE,
  agent: AGENT_EXAMPLE,
  identifiers: [PARTY_IDENTIFIER_EXAMPLE],
  countryOfResidence: 'FR',
};

/** The initiation the reference page sends: valid today and on any later day (no valueDate). */
export const INITIATION_EXAMPLE = {
  identifiers: [PAYMENT_IDENTIFICATION_EXAMPLE],
  paymentMethod: 'CreditTransfer',
  paymentType: 'NotOnUs',
  amount: '1250.00',
  currency: 'EUR',
  paymentReason: 'InvoicePayment',
  debtorAccountId: DEBTOR_IBAN,
  creditorAccountId: CREDITOR_IBAN,
  purpose: 'Invoice 2026-118, office supplies',
  paymentProcessing: { instructionPriority: 'Normal', serviceLevel: 'SEPA', categoryPurpose: 'SUPP' },
  chargeBearerType: 'Shared',
  creditor: PARTY_IDENTIFICATION_EXAMPLE,
  remittanceInformation: { remittanceNumber: 'INV-2026-118', documentType: 'CommercialInvoice' },
};

export const PAYMENT_ID_EXAMPLE = '5f0c9a2e-8d4b-8c1e-9f6a-2b7d3e8c1a40';

/** The 202 answer to INITIATION_EXAMPLE. */
export const CREDIT_TRANSFER_EXAMPLE = {
  ...INITIATION_EXAMPLE,
  paymentId: PAYMENT_ID_EXAMPLE,
  status: 'Received',
  date: '2026-11-23T09:30:00.000Z',
};

/** The same transfer once settled, as the status report answers it. */
export const SETTLED_EXAMPLE = {
  ...CREDIT_TRANSFER_EXAMPLE,
  status: 'AcceptedSettlementCompleted',
  date: '2026-11-23T09:30:02.418Z',
};

/** Another transfer of the same debtor, refused by its bank: the list shows both. */
const REJECTED_EXAMPLE = {
  paymentMethod: 'CreditTransfer',
  amount: '89.90',
  currency: 'EUR',
  paymentReason: 'Subscription',
  debtorAccountId: DEBTOR_IBAN,
  creditorAccountId: 'NL91ABNA0417164300',
  chargeBearerType: 'Shared',
  valueDate: '2026-11-20',
  paymentId: '0b6e4d1c-7a2f-4e83-b5d9-6c1f2a8e9d37',
  status: 'Rejected',
  statusReason: 'InsufficientFunds',
  date: '2026-11-20T16:05:41.092Z',
};

export const LIST_EXAMPLE = [SETTLED_EXAMPLE, REJECTED_EXAMPLE];

/** A batch as the list shows it; a batch's own read adds its transfers. */
const BATCH_SUMMARY_EXAMPLE = {
  batchId: '0b0d5c1e-7d8a-8f3e-9c41-2a6b7e5d4c3f',
  status: 'Completed',
  count: 2,
  createdAt: '2026-11-26T09:30:01.118Z',
  messageId: 'PAYROLL-2026-12-A',
  messageName: 'pain.001.001.09',
  groupStatus: 'PART',
  open: 0,
  countsByStatus: { AcceptedSettlementCompleted: 1, Rejected: 1 },
  countsByReasonCode: { AM04: 1 },
  completedAt: '2026-12-01T00:00:03.511Z',
};

export const CANCELLATION_REQUEST_EXAMPLE = {
  cancellationReason: 'Ordered twice: duplicate of invoice INV-2026-117',
};

/** A body for `npm start`'s own client: the token sample works as shown against a local service. */
export const TOKEN_REQUEST_EXAMPLE = {
  grant_type: 'client_credentials',
  client_id: 'local-client',
  client_secret: 'local-client-secret',
  scope: 'transactions:read transactions:write',
};

export const TOKEN_RESPONSE_EXAMPLE = {
  access_token:
    'eyJhbGciOiJSUzI1NiIsImtpZCI6IjdxQ0h6NWx4Q2lVZlI2Z0VnT3pQIiwidHlwIjoiSldUIn0.eyJpc3MiOiJodHRwOi8vMTI3LjAuMC4xOjMwMDAiLCJzdWIiOiJsb2NhbC1jbGllbnQiLCJzY29wZSI6InRyYW5zYWN0aW9uczpyZWFkIHRyYW5zYWN0aW9uczp3cml0ZSJ9.c2lnbmF0dXJl',
  token_type: 'Bearer',
  expires_in: 3600,
  scope: 'transactions:read transactions:write',
};

export const JSON_WEB_KEY_SET_EXAMPLE = {
  keys: [
    {
      kty: 'EC',
      crv: 'P-256',
      x: 'MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4',
      y: '4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM',
      kid: 'Jc4yWpX8cz7g3nPq0AZg',
      alg: 'ES256',
      use: 'sig',
    },
    {
      kty: 'RSA',
      n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      kid: '7qCHz5lxCiUfR6gEgOzP',
      alg: 'RS256',
      use: 'sig',
    },
  ],
};

export const OPENID_CONFIGURATION_EXAMPLE = {
  issuer: PUBLIC_URL,
  token_endpoint: `${PUBLIC_URL}/oauth/token`,
  jwks_uri: `${PUBLIC_URL}/.well-known/jwks.json`,
  grant_types_supported: ['client_credentials'],
  token_endpoint_auth_methods_supported: ['private_key_jwt', 'client_secret_basic', 'client_secret_post'],
  token_endpoint_auth_signing_alg_values_supported: ['ES256', 'PS256', 'EdDSA'],
  dpop_signing_alg_values_supported: ['ES256', 'PS256', 'EdDSA'],
  scopes_supported: ['transactions:read', 'transactions:write'],
  response_types_supported: [],
  service_documentation: `${PUBLIC_URL}/docs`,
};

export const OPENAPI_DOCUMENT_EXAMPLE = {
  openapi: '3.1.0',
  info: { title: 'Credit Transfers API', version: '0.7.0' },
};

/** A refusal of each kind the document lists, as `#shared/problem` writes it. */
const PROBLEM_DETAILS: Record<number, [ErrorCode, string]> = {
  400: [
    'invalid_request',
    'The request is not valid: amount must be a decimal with at most 2 fractional digits for EUR',
  ],
  401: ['invalid_token', 'The access token is missing, malformed, expired or not valid for this API'],
  403: ['insufficient_scope', 'The access token does not carry the scope transactions:write'],
  404: ['not_found', 'No credit transfer with this paymentId'],
  408: ['request_timeout', 'The request was not received in time'],
  409: [
    'payment_not_cancellable',
    'The credit transfer is AcceptedSettlementCompleted and can no longer be cancelled',
  ],
  412: ['precondition_failed', 'The payment controls changed since that ETag; the current one is "3"'],
  413: ['payload_too_large', 'The request body is larger than 65536 bytes'],
  415: ['unsupported_media_type', 'The request body must be application/json'],
  422: ['idempotency_key_reused', 'This idempotency key was used with a different request'],
  428: [
    'precondition_required',
    'Send If-Match with the ETag of the payment controls you changed (GET /v1/payment-controls)',
  ],
  429: ['rate_limited', 'Too many requests; retry after the number of seconds in Retry-After'],
  431: ['request_header_fields_too_large', 'The request headers are too large'],
  500: ['internal_error', 'An unexpected error occurred; the request may be retried'],
  502: ['internal_error', 'The service answered unexpectedly; the request may be retried'],
  503: [
    'service_unavailable',
    'The service is unavailable; retry after the number of seconds in Retry-After',
  ],
  504: ['service_unavailable', 'The service did not answer in time; the request may be retried'],
};

/** The example Problem of a status (the 400 names the offending field, as every 400 does). */
export const problemExample = (status: number): ProblemBody => {
  const [error, description] = PROBLEM_DETAILS[status] ?? ['internal_error', 'An unexpected error occurred'];
  return problemBody(
    status,
    error,
    description,
    status === 400
      ? [{ name: 'amount', reason: 'must have at most 2 fractional digits for EUR' }]
      : undefined,
  );
};

/** The token endpoint's own refusals (RFC 6749 section 5.2), as it answers them. */
const TOKEN_PROBLEM_DETAILS: Record<number, [ErrorCode, string]> = {
  400: ['unsupported_grant_type', 'Only the client_credentials grant is supported'],
  401: ['invalid_client', 'Client authentication failed'],
  429: [
    'rate_limited',
    'Too many failed client authentications; retry after the number of seconds in Retry-After',
  ],
};

export const tokenProblemExample = (status: number): ProblemBody => {
  const details = TOKEN_PROBLEM_DETAILS[status];
  return details ? problemBody(status, details[0], details[1]) : problemExample(status);
};

/** A tenant's payment controls (docs/approvals.md). */
export const PAYMENT_CONTROLS_EXAMPLE = {
  approvalRules: [
    { name: 'large EUR payments', currency: 'EUR', minimumAmount: '10000.00', approvalsRequired: 2 },
    { name: 'new creditors', newCreditorOnly: true, approvalsRequired: 1 },
  ],
  approvalExpiry: 'P7D',
  limits: [
    {
      debtorAccountId: 'DE89370400440532013000',
      currency: 'EUR',
      period: 'day',
      maxAmount: '50000.00',
      maxCount: 100,
      onBreach: 'reject',
    },
    { currency: 'EUR', period: 'transaction', maxAmount: '250000.00', onBreach: 'approval' },
  ],
};

/** One example for every component schema, by component name. */

/** A webhook endpoint as registered, its events and its delivery attempts. */
export const WEBHOOK_ENDPOINT_ID = '0192f3a4-5b6c-7d8e-9f01-23456789abcd';
const WEBHOOK_ENDPOINT_EXAMPLE = {
  id: WEBHOOK_ENDPOINT_ID,
  url: 'https://erp.acme.example/hooks/payments',
  description: 'ERP payment status updates',
  eventTypes: [
    'credit-transfer.status-changed',
    'webhook-endpoint.disabled',
    'credit-transfer-batch.completed',
  ],
  status: 'enabled',
  createdAt: '2026-11-24T09:15:02.118Z',
};
const WEBHOOK_SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const STATUS_EVENT_ID = '0192f3a5-0c1d-7e2f-8a3b-4c5d6e7f8091';
export const STATUS_CHANGED_EVENT_EXAMPLE = {
  id: STATUS_EVENT_ID,
  type: 'credit-transfer.status-changed',
  createdAt: '2026-11-24T09:16:40.512Z',
  data: {
    paymentId: PAYMENT_ID_EXAMPLE,
    status: 'AcceptedSettlementCompleted',
    date: '2026-11-24T09:16:40.497Z',
    previousStatus: 'AcceptedSettlementInProcess',
    sequence: 4,
  },
};
const ENDPOINT_DISABLED_EVENT_EXAMPLE = {
  id: '0192f3b0-77aa-7bcd-8e0f-1a2b3c4d5e6f',
  type: 'webhook-endpoint.disabled',
  createdAt: '2026-11-27T09:20:00.004Z',
  data: {
    endpointId: WEBHOOK_ENDPOINT_ID,
    url: 'https://erp.acme.example/hooks/payments',
    reason: 'failing',
    disabledAt: '2026-11-27T09:20:00.001Z',
  },
};

const BATCH_COMPLETED_EVENT_EXAMPLE = {
  id: '8d1f7c2e-4b9a-8e3d-a1c5-7f2e9b4d6a10',
  type: 'credit-transfer-batch.completed',
  createdAt: '2026-12-01T00:00:03.530Z',
  data: {
    batchId: '0b0d5c1e-7d8a-8f3e-9c41-2a6b7e5d4c3f',
    messageId: 'PAYROLL-2026-12-A',
    count: 2,
    groupStatus: 'PART',
    countsByStatus: { AcceptedSettlementCompleted: 1, Rejected: 1 },
    countsByReasonCode: { AM04: 1 },
    completedAt: '2026-12-01T00:00:03.511Z',
  },
};

const APPROVAL_EXAMPLE = {
  rule: 'large EUR payments',
  approvalsRequired: 2,
  approvals: [],
  expiresAt: '2026-11-27T09:15:00.000Z',
};
const APPROVAL_REQUIRED_EVENT_EXAMPLE = {
  id: '5a2e9c1f-3b7d-8c4e-9f10-2d6b8a4c1e73',
  type: 'credit-transfer.approval-required',
  createdAt: '2026-11-24T09:15:00.142Z',
  data: {
    paymentId: PAYMENT_ID_EXAMPLE,
    date: '2026-11-24T09:15:00.118Z',
    sequence: 0,
    approval: APPROVAL_EXAMPLE,
  },
};
const APPROVED_EVENT_EXAMPLE = {
  id: '7c4b1e8a-2d5f-8a9c-b3e6-4f1a7d2c9b05',
  type: 'credit-transfer.approved',
  createdAt: '2026-11-24T10:02:11.380Z',
  data: {
    paymentId: PAYMENT_ID_EXAMPLE,
    date: '2026-11-24T10:02:11.361Z',
    sequence: 1,
    approval: {
      ...APPROVAL_EXAMPLE,
      approvals: [
        { clientId: 'acme-treasury-1', decision: 'approve', at: '2026-11-24T09:41:03.220Z' },
        {
          clientId: 'acme-cfo',
          decision: 'approve',
          reason: 'Checked against PO-5521',
          at: '2026-11-24T10:02:11.344Z',
        },
      ],
    },
  },
};

export const COMPONENT_EXAMPLES: Readonly<Record<string, unknown>> = {
  Account: ACCOUNT_EXAMPLE,
  Agent: AGENT_EXAMPLE,
  AgentIdentifier: AGENT_IDENTIFIER_EXAMPLE,
  CancellationRequest: CANCELLATION_REQUEST_EXAMPLE,
  CreditTransfer: SETTLED_EXAMPLE,
  CreditTransferRequest: INITIATION_EXAMPLE,
  CreditTransferBatchRequest: { creditTransfers: [INITIATION_EXAMPLE] },
  CreditTransferBatchAccepted: {
    batchId: '0b0d5c1e-7d8a-8f3e-9c41-2a6b7e5d4c3f',
    status: 'Accepted',
    count: 2,
    createdAt: '2026-11-26T09:30:01.118Z',
    messageId: 'PAYROLL-2026-12-A',
    messageName: 'pain.001.001.09',
    creditTransfers: [
      { paymentId: '5e2f0c9a-1b7d-8e4f-a3c2-6d9b8a7f1e20' },
      { paymentId: 'c81d4e0b-9a3f-8c2e-b7d1-0f6a5e4d3c21' },
    ],
  },
  CreditTransferBatchSummary: BATCH_SUMMARY_EXAMPLE,
  CreditTransferBatch: {
    ...BATCH_SUMMARY_EXAMPLE,
    creditTransfers: [
      {
        paymentId: '5e2f0c9a-1b7d-8e4f-a3c2-6d9b8a7f1e20',
        status: 'AcceptedSettlementCompleted',
        date: '2026-12-01T00:00:03.402Z',
      },
      {
        paymentId: 'c81d4e0b-9a3f-8c2e-b7d1-0f6a5e4d3c21',
        status: 'Rejected',
        statusReason: 'InsufficientFunds',
        statusReasonCode: 'AM04',
        date: '2026-12-01T00:00:01.977Z',
      },
    ],
  },
  CreditTransferStatus: 'AcceptedSettlementCompleted',
  GenericTransactionCode: GENERIC_TRANSACTION_CODE_EXAMPLE,
  JsonWebKeySet: JSON_WEB_KEY_SET_EXAMPLE,
  OpenApiDocument: OPENAPI_DOCUMENT_EXAMPLE,
  OpenIdConfiguration: OPENID_CONFIGURATION_EXAMPLE,
  PartyIdentification: PARTY_IDENTIFICATION_EXAMPLE,
  PartyIdentifier: PARTY_IDENTIFIER_EXAMPLE,
  PaymentIdentification: PAYMENT_IDENTIFICATION_EXAMPLE,
  PostalAddress: POSTAL_ADDRESS_EXAMPLE,
  Problem: problemExample(400),
  TokenRequest: TOKEN_REQUEST_EXAMPLE,
  TokenResponse: TOKEN_RESPONSE_EXAMPLE,
  WebhookEndpointRequest: {
    url: 'https://erp.acme.example/hooks/payments',
    description: 'ERP payment status updates',
    eventTypes: ['credit-transfer.status-changed'],
  },
  WebhookEndpoint: WEBHOOK_ENDPOINT_EXAMPLE,
  CreatedWebhookEndpoint: { ...WEBHOOK_ENDPOINT_EXAMPLE, secret: WEBHOOK_SECRET_EXAMPLE },
  RotatedWebhookSecret: {
    ...WEBHOOK_ENDPOINT_EXAMPLE,
    secret: 'whsec_p6Zc0Qm1YbT3uVw4xK8sN2hJ5gF7dR9a',
    previousSecretExpiresAt: '2026-11-25T10:00:00.000Z',
  },
  WebhookDeliveryAttempt: {
    eventId: STATUS_EVENT_ID,
    attempt: 1,
    attemptedAt: '2026-11-24T09:16:40.530Z',
    durationMs: 84,
    httpStatus: 200,
    outcome: 'delivered',
  },
  WebhookRedeliveryRequest: { since: '2026-11-24T00:00:00.000Z' },
  WebhookRedeliveryResult: { queued: 42 },
  CreditTransferStatusChangedEvent: STATUS_CHANGED_EVENT_EXAMPLE,
  WebhookEndpointDisabledEvent: ENDPOINT_DISABLED_EVENT_EXAMPLE,
  CreditTransferBatchCompletedEvent: BATCH_COMPLETED_EVENT_EXAMPLE,
  CreditTransferApprovalRequiredEvent: APPROVAL_REQUIRED_EVENT_EXAMPLE,
  CreditTransferApprovedEvent: APPROVED_EVENT_EXAMPLE,
  Event: STATUS_CHANGED_EVENT_EXAMPLE,
};

/**
 * The idempotency key the initiation and batch samples send says what to send instead: a new key
 * per payment. A fixed key pasted twice answers the first payment again and pays nothing, silently
 * to whoever thought they made a second one. The cancellation's key is per paymentId already.
 */
export const IDEMPOTENCY_KEY_EXAMPLE = 'replace-with-a-new-uuid-per-payment';
export const CANCELLATION_KEY_EXAMPLE = 'inv-2026-118-cancellation';
/** A decision's key: a placeholder, so the reference page's try-it never sends one key twice by default. */
export const DECISION_KEY_EXAMPLE = 'replace-with-a-new-uuid-per-decision';
