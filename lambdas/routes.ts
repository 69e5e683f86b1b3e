import type { Scope } from '#domain/access/scopes';
import { REFERENCE_RENDERER, type StaticAsset } from '#shared/static-asset';

/**
 * The route table, the one list both runtimes read: the CDK stack makes a REST resource,
 * method and function of each, the local server dispatches to the same handler files.
 * A route with a scope sits behind the authorizer; one without is public.
 */
export interface Route {
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** API Gateway resource path, with `{name}` path parameters. */
  path: string;
  /** Handler source file, relative to the project root; it exports `handler`. */
  entry: string;
  scope?: Scope;
  summary: string;
  /** Files the handler serves or reads as they are: copied beside its function's code, never bundled. */
  assets?: readonly StaticAsset[];
  /** The most bytes its body may have, when more than the service's default (MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /**
   * Its answer is streamed (API Gateway's STREAM transfer mode, Lambda response streaming): the
   * handler writes the body's bytes as they are, with no string to build and no base64.
   */
  streamed?: true;
}

/** The official pain.001 schemas the batch route validates with (lambdas/adapters/iso20022/xsd). */
const PAIN_001_SCHEMAS: readonly StaticAsset[] = ['pain.001.001.09', 'pain.001.001.03'].map((name) => ({
  file: `${name}.xsd`,
  source: `lambdas/adapters/iso20022/xsd/${name}.xsd`,
  contentType: 'application/xml',
}));

/** A batch of credit transfers: MAX_BATCH_BYTES of lambdas/domain/iso20022/submit-batch.ts. */
const MAX_BATCH_BODY_BYTES = 5 * 1024 * 1024;

export const ROUTES: readonly Route[] = [
  {
    operationId: 'issueToken',
    method: 'POST',
    path: '/oauth/token',
    entry: 'lambdas/auth/issue-token.ts',
    summary: 'Issue an access token (OAuth 2.0 client credentials)',
  },
  {
    operationId: 'getJsonWebKeySet',
    method: 'GET',
    path: '/.well-known/jwks.json',
    entry: 'lambdas/auth/key-set.ts',
    summary: 'Public keys that verify access tokens',
  },
  {
    // RFC 8414's own path for the same metadata: OAuth clients that discover with it find it too.
    operationId: 'getAuthorizationServerMetadata',
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    entry: 'lambdas/auth/openid-configuration.ts',
    summary: 'Authorization server metadata (RFC 8414)',
  },
  {
    operationId: 'getOpenIdConfiguration',
    method: 'GET',
    path: '/.well-known/openid-configuration',
    entry: 'lambdas/auth/openid-configuration.ts',
    summary: 'Authorization server metadata',
  },
  {
    operationId: 'listCreditTransfers',
    method: 'GET',
    path: '/v1/payments/credit-transfers',
    entry: 'lambdas/api/list-credit-transfers.ts',
    scope: 'transactions:read',
    summary: 'List credit transfers',
  },
  {
    operationId: 'initiateCreditTransfer',
    method: 'POST',
    path: '/v1/payments/credit-transfers',
    entry: 'lambdas/api/initiate-credit-transfer.ts',
    scope: 'transactions:write',
    summary: 'Credit transfer initiation',
  },
  {
    operationId: 'getCreditTransferStatus',
    method: 'GET',
    path: '/v1/payments/credit-transfers/{paymentId}/status',
    entry: 'lambdas/api/get-credit-transfer-status.ts',
    scope: 'transactions:read',
    summary: 'Credit transfer status report',
  },
  {
    operationId: 'cancelCreditTransfer',
    method: 'POST',
    path: '/v1/payments/credit-transfers/{paymentId}/cancellation',
    entry: 'lambdas/api/cancel-credit-transfer.ts',
    scope: 'transactions:write',
    summary: 'Credit transfer cancellation',
  },
  {
    operationId: 'decideCreditTransferApproval',
    method: 'POST',
    path: '/v1/payments/credit-transfers/{paymentId}/approvals',
    entry: 'lambdas/api/decide-approval.ts',
    scope: 'transactions:approve',
    summary: 'Approve or reject a credit transfer that waits for approval',
  },
  {
    operationId: 'listCreditTransferApprovals',
    method: 'GET',
    path: '/v1/payments/credit-transfers/{paymentId}/approvals',
    entry: 'lambdas/api/list-approvals.ts',
    scope: 'transactions:approve',
    summary: 'The approval decisions on a credit transfer',
  },
  {
    operationId: 'submitCreditTransferBatch',
    method: 'POST',
    path: '/v1/payments/credit-transfer-batches',
    entry: 'lambdas/api/submit-credit-transfer-batch.ts',
    scope: 'transactions:write',
    summary: 'Credit transfer batch: JSON, or a pain.001 (.001.09 or .001.03)',
    assets: PAIN_001_SCHEMAS,
    maxBodyBytes: MAX_BATCH_BODY_BYTES,
  },
  {
    operationId: 'decideCreditTransferBatchApproval',
    method: 'POST',
    path: '/v1/payments/credit-transfer-batches/{batchId}/approvals',
    entry: 'lambdas/api/decide-batch-approval.ts',
    scope: 'transactions:approve',
    summary: 'Approve or reject every transfer of a batch that waits for approval',
  },
  {
    operationId: 'listCreditTransferBatches',
    method: 'GET',
    path: '/v1/payments/credit-transfer-batches',
    entry: 'lambdas/api/list-credit-transfer-batches.ts',
    scope: 'transactions:read',
    summary: "List the tenant's credit transfer batches",
  },
  {
    operationId: 'getCreditTransferBatch',
    method: 'GET',
    path: '/v1/payments/credit-transfer-batches/{batchId}',
    entry: 'lambdas/api/get-credit-transfer-batch.ts',
    scope: 'transactions:read',
    summary: "A batch's transfers and their statuses, or its pain.002",
  },
  {
    operationId: 'getCreditTransferBatchNotification',
    method: 'GET',
    path: '/v1/payments/credit-transfer-batches/{batchId}/notification',
    entry: 'lambdas/api/get-credit-transfer-batch-notification.ts',
    scope: 'transactions:read',
    summary: "A batch's debit notification (camt.054.001.08) of what settled",
  },
  {
    operationId: 'getCreditTransferNotification',
    method: 'GET',
    path: '/v1/payments/credit-transfers/{paymentId}/notification',
    entry: 'lambdas/api/get-credit-transfer-notification.ts',
    scope: 'transactions:read',
    summary: "A credit transfer's debit notification (camt.054.001.08) once settled",
  },
  ...webhookRoutes(),
  ...paymentControlRoutes(),
  {
    operationId: 'getOpenApiDocument',
    method: 'GET',
    path: '/openapi.json',
    entry: 'lambdas/api/openapi-document.ts',
    summary: 'This API as an OpenAPI 3.1 document',
  },
  {
    operationId: 'getReferencePage',
    method: 'GET',
    path: '/docs',
    entry: 'lambdas/api/reference-page.ts',
    summary: 'API reference page',
  },
  {
    operationId: 'getReferencePageScript',
    method: 'GET',
    path: '/docs/scalar.js',
    entry: 'lambdas/api/reference-page-script.ts',
    summary: 'The script that renders the API reference page',
    assets: [REFERENCE_RENDERER],
    streamed: true,
  },
];

/** A builder of routes under one path prefix and one scope, each handled by a file of its own. */
function routeUnder(prefix: string, scope: NonNullable<Route['scope']>) {
  return (
    operationId: string,
    method: Route['method'],
    path: string,
    file: string,
    summary: string,
  ): Route => ({
    operationId,
    method,
    path: `${prefix}${path}`,
    entry: `lambdas/api/${file}.ts`,
    scope,
    summary,
  });
}

/** Webhook endpoints and the events API (issue 17). */
function webhookRoutes(): Route[] {
  const endpoint = routeUnder('/v1/webhook-endpoints', 'webhooks:manage');
  return [
    endpoint('createWebhookEndpoint', 'POST', '', 'create-webhook-endpoint', 'Register a webhook endpoint'),
    endpoint('listWebhookEndpoints', 'GET', '', 'list-webhook-endpoints', 'List webhook endpoints'),
    endpoint('getWebhookEndpoint', 'GET', '/{id}', 'get-webhook-endpoint', 'Read a webhook endpoint'),
    endpoint(
      'deleteWebhookEndpoint',
      'DELETE',
      '/{id}',
      'delete-webhook-endpoint',
      'Delete a webhook endpoint',
    ),
    endpoint(
      'rotateWebhookSecret',
      'POST',
      '/{id}/secret-rotation',
      'rotate-webhook-secret',
      'Rotate the signing secret of a webhook endpoint',
    ),
    endpoint(
      'listWebhookDeliveries',
      'GET',
      '/{id}/deliveries',
      'list-webhook-deliveries',
      'Recent delivery attempts to a webhook endpoint',
    ),
    endpoint(
      'redeliverWebhookEvents',
      'POST',
      '/{id}/redeliveries',
      'redeliver-webhook-events',
      'Queue events again for a webhook endpoint',
    ),
    {
      operationId: 'listEvents',
      method: 'GET',
      path: '/v1/events',
      entry: 'lambdas/api/list-events.ts',
      scope: 'transactions:read',
      summary: 'List events',
    },
  ];
}

/** The tenant's approval rules and limits (docs/approvals.md). */
function paymentControlRoutes(): Route[] {
  const route = routeUnder('/v1/payment-controls', 'payment-controls:manage');
  return [
    route('getPaymentControls', 'GET', '', 'get-payment-controls', "The tenant's approval rules and limits"),
    route(
      'putPaymentControls',
      'PUT',
      '',
      'put-payment-controls',
      "Replace the tenant's approval rules and limits",
    ),
    route(
      'listPaymentControlsVersions',
      'GET',
      '/versions',
      'list-payment-controls-versions',
      'Every version of the payment controls, newest first',
    ),
    route(
      'getPaymentControlsUsage',
      'GET',
      '/usage',
      'get-payment-controls-usage',
      "What each of an account's limits has used in its current period",
    ),
  ];
}

/** Matches a concrete path against a route path; returns the path parameters, or undefined. */
export const matchPath = (routePath: string, path: string): Record<string, string> | undefined => {
  const routeSegments = routePath.split('/');
  const segments = path.split('/');
  if (routeSegments.length !== segments.length) return undefined;
  const parameters: Record<string, string> = {};
  for (const [index, routeSegment] of routeSegments.entries()) {
    const segment = segments[index] ?? '';
    const parameter = /^\{(\w+)\}$/.exec(routeSegment)?.[1];
    if (parameter !== undefined) {
      if (segment === '') return undefined;
      parameters[parameter] = segment;
    } else if (routeSegment !== segment) {
      return undefined;
    }
  }
  return parameters;
};
