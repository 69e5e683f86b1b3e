import {
  CANCELLATION_KEY_EXAMPLE,
  CANCELLATION_REQUEST_EXAMPLE,
  INITIATION_EXAMPLE,
  PAYMENT_ID_EXAMPLE,
  PUBLIC_URL,
  WEBHOOK_ENDPOINT_ID,
} from './openapi-examples.ts';

/**
 * TypeScript samples of the SDK (`@credit-transfers/client`, client/), by operationId: the
 * document carries each as `x-codeSamples`, which the reference page shows beside the request it
 * generates itself (curl). An operation without an entry (the SDK has no call for it) still gets
 * curl. A unit test type-checks every sample against client/src, so a renamed call fails the build.
 */

export const SDK_PACKAGE = '@credit-transfers/client';

/** The introduction's SDK card (Markdown). */
export const SDK_INSTALLATION = `The typed SDK (and the \`credit-transfers\` command line) is the \`client/\` package of this project:

\`\`\`sh
# In the service's folder: packs the SDK and prints the line to run in your project
npm run -s client:pack
# npm install /path/to/credit-transfer-service/credit-transfers-client-0.1.0.tgz
\`\`\`

It is not on a registry yet; once published it will be \`npm install ${SDK_PACKAGE}\`.

It obtains and renews access tokens, sends an idempotency key with every initiation and cancellation (a retry never pays twice), and waits for final statuses. Each operation below shows its call.`;

/** What every sample starts with: the client, its credentials from the environment. */
export const SDK_PREAMBLE = `import { CreditTransfersClient } from '${SDK_PACKAGE}';

const client = new CreditTransfersClient({
  baseUrl: '${PUBLIC_URL}',
  clientId: process.env.CREDIT_TRANSFERS_CLIENT_ID ?? 'local-client',
  clientSecret: process.env.CREDIT_TRANSFERS_CLIENT_SECRET ?? 'local-client-secret',
});
`;

const literal = (value: unknown): string => JSON.stringify(value).replaceAll('"', "'");

const {
  paymentMethod,
  amount,
  currency,
  paymentReason,
  debtorAccountId,
  creditorAccountId,
  chargeBearerType,
  purpose,
} = INITIATION_EXAMPLE;

const SAMPLES: Readonly<Record<string, string>> = {
  issueToken: `// The SDK asks for tokens itself, renews them before expiry and after a 401.
// To call the API with another tool, ask it for one:
const token = await client.tokens.tokenResponse();
console.log(token.access_token, token.expires_in, token.scope);
`,
  initiateCreditTransfer: `// A new idempotency key for each payment, kept with it: sending this payment again with the
// same key (a retry after a timeout) answers it again and never pays twice. A key reused for
// another payment would answer the first one and pay nothing.
const idempotencyId = crypto.randomUUID();
const accepted = await client.initiate(
  {
    paymentMethod: ${literal(paymentMethod)},
    amount: ${literal(amount)},
    currency: ${literal(currency)},
    paymentReason: ${literal(paymentReason)},
    debtorAccountId: ${literal(debtorAccountId)},
    creditorAccountId: ${literal(creditorAccountId)},
    chargeBearerType: ${literal(chargeBearerType)},
    purpose: ${literal(purpose)},
  },
  { idempotencyId },
);
console.log(accepted.paymentId, accepted.status, accepted.replayed);

// Then wait for AcceptedSettlementCompleted, Rejected or Cancelled.
const final = await client.waitForFinalStatus(accepted.paymentId, { timeoutMs: 60_000 });
console.log(final.status, final.statusReason);
`,
  getCreditTransferStatus: `const { report, etag } = await client.status(${literal(PAYMENT_ID_EXAMPLE)});
console.log(report.status, report.statusReason, report.date);

// Asking again with the ETag costs nothing while the status is unchanged (304).
const again = await client.status(report.paymentId, { ifNoneMatch: etag ?? '*' });
console.log(again.modified ? again.report.status : 'unchanged');
`,
  listCreditTransfers: `// Every transfer of this client, newest first, across all pages.
for await (const transfer of client.list()) {
  console.log(transfer.paymentId, transfer.status, transfer.amount);
}

// Or filtered, one page at a time: pass page.cursor to read the next.
const page = await client.listPage({ 'debtorAccountId.eq': ${literal(debtorAccountId)} }, { limit: 50 });
console.log(page.items.length, page.total, page.cursor);
`,
  cancelCreditTransfer: `const answer = await client.cancel(
  ${literal(PAYMENT_ID_EXAMPLE)},
  { cancellationReason: ${literal(CANCELLATION_REQUEST_EXAMPLE.cancellationReason)} },
  { idempotencyId: ${literal(CANCELLATION_KEY_EXAMPLE)} },
);
console.log(answer.status); // Cancelled once the cancellation wins before settlement
`,
  createWebhookEndpoint: `const endpoint = await client.webhooks.create({
  url: 'https://erp.acme.example/hooks/payments',
  description: 'ERP payment status updates',
  eventTypes: ['credit-transfer.status-changed'],
});
// Shown this once only: keep it where your receiver verifies signatures.
console.log(endpoint.id, endpoint.secret);
`,
  listWebhookEndpoints: `for await (const endpoint of client.webhooks.list()) {
  console.log(endpoint.id, endpoint.url, endpoint.status);
}
`,
  getWebhookEndpoint: `const endpoint = await client.webhooks.get(${literal(WEBHOOK_ENDPOINT_ID)});
console.log(endpoint.url, endpoint.status, endpoint.eventTypes);
`,
  deleteWebhookEndpoint: `await client.webhooks.delete(${literal(WEBHOOK_ENDPOINT_ID)});
`,
  rotateWebhookSecret: `// The old secret keeps signing beside the new one until previousSecretExpiresAt.
const rotated = await client.webhooks.rotateSecret(${literal(WEBHOOK_ENDPOINT_ID)});
console.log(rotated.secret, rotated.previousSecretExpiresAt);
`,
  listWebhookDeliveries: `const attempts = await client.webhooks.deliveries(${literal(WEBHOOK_ENDPOINT_ID)});
for (const attempt of attempts) {
  console.log(attempt.eventId, attempt.attempt, attempt.outcome, attempt.httpStatus ?? attempt.error);
}
`,
  redeliverWebhookEvents: `// Everything recorded since the receiver went down, sent again (same webhook-id as before).
const { queued } = await client.webhooks.redeliver(${literal(WEBHOOK_ENDPOINT_ID)}, {
  since: '2026-11-24T00:00:00.000Z',
});
console.log(queued);
`,
  listEvents: `// Catch up without webhooks: every event since a time, oldest first, across all pages.
for await (const event of client.events.list({ 'createdAt.gte': '2026-11-24T00:00:00.000Z' })) {
  console.log(event.id, event.type, event.createdAt);
}
`,
  decideCreditTransferApproval: `// As a client of the tenant other than the one that initiated the transfer. A retry reuses the
// idempotency key (a new one per decision by default) and is answered again, not refused.
const decided = await client.approve(${literal(PAYMENT_ID_EXAMPLE)}, { reason: 'Checked against the invoice' });
console.log(decided.status, decided.approval?.approvals.length);
// Or: await client.reject(paymentId, { reason: 'Unknown supplier' }); // ends Rejected (DS02)
`,
  listCreditTransferApprovals: `const decisions = await client.approvals(${literal(PAYMENT_ID_EXAMPLE)});
for (const decision of decisions) {
  console.log(decision.clientId, decision.decision, decision.reason, decision.at);
}
`,
  getPaymentControls: `const { controls, etag } = await client.paymentControls.get();
console.log(etag, controls.approvalRules, controls.limits);
`,
  putPaymentControls: `import { PreconditionFailedError } from '${SDK_PACKAGE}';

// Read, change, and send back naming the version read: a change made meanwhile is not overwritten.
const { controls, etag } = await client.paymentControls.get();
try {
  const stored = await client.paymentControls.put({ ...controls, approvalExpiry: 'P3D' }, { ifMatch: etag });
  console.log(stored.etag);
} catch (error) {
  if (!(error instanceof PreconditionFailedError)) throw error;
  console.log('Changed by someone else since it was read: read it again and apply the change');
}
`,
  listPaymentControlsVersions: `for await (const version of client.paymentControls.versions()) {
  console.log(version.version, version.clientId, version.createdAt);
}
`,
};

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

/** The `x-codeSamples` of an operation: the SDK's, when the SDK has a call for it. */
export const codeSamplesOf = (operationId: string): CodeSample[] => {
  const body = SAMPLES[operationId];
  return body === undefined
    ? []
    : [{ lang: 'TypeScript', label: 'TypeScript SDK', source: `${SDK_PREAMBLE}\n${body}` }];
};

/** The operations with an SDK sample (for the tests). */
export const OPERATIONS_WITH_SDK_SAMPLES: readonly string[] = Object.keys(SAMPLES);
