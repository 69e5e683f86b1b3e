import { Aws } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { LIST_INDEXES, WEBHOOK_INDEX } from '#adapters/table/table-definition';
import type { WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import type { ListCursorKey } from './constructs/cursor-key.ts';
import type { Binding } from './constructs/function-defaults.ts';
import type { TokenSigningKeys } from './constructs/signing-key.ts';
import type { WebhookSecretKey } from './constructs/webhook-secret-key.ts';

/** What the functions may be bound to. */
export interface ServiceResources {
  readonly table: ITable;
  readonly signingKey: TokenSigningKeys;
  /** The HMAC key the list cursors' secret is derived from. */
  readonly cursorKey: ListCursorKey;
  /** The credit transfer lifecycle workflow. */
  readonly lifecycle: IStateMachine;
  /** The function that starts a stored batch's lifecycles (lambdas/workflow/start-batch-lifecycles.ts). */
  readonly batchLifecycles: IFunction;
  /** The lifecycle's publish step function, which also announces transfers held for approval. */
  readonly statusPublisher: IFunction;
  /** The key the webhook signing secrets are sealed under. */
  readonly webhookSecretKey: WebhookSecretKey;
  /** The `iss` and `aud` of the access tokens. */
  readonly issuer: string;
  readonly audience: string;
  /** The stage's client authentication settings (lambdas/adapters/access/client-authentication-settings.ts). */
  readonly clientSecrets: boolean;
  readonly requireDpop: boolean;
  /** The secret DPoP server nonces are made with, when the stage asks for them (`-c dpopNonces=true`). */
  readonly dpopNonceSecret?: ISecret;
}

type TableAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'Query'
  | 'TransactWriteItems';
type SigningKeyAction = 'Sign' | 'GetPublicKey';
const TABLE_WRITES: readonly TableAction[] = ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'];

/**
 * The partition key prefixes of the table's items (lambdas/adapters/table/keys.ts), as the grants name
 * them. A grant names the prefixes a function needs, and DynamoDB refuses any other partition.
 */
export const KEY_PREFIXES = {
  /** A tenant's credit transfers (payments). */
  creditTransfers: 'PAYMENT#',
  /** The list indexes' partitions (per tenant): queried by the list route only. */
  creditTransferLists: 'PAYMENT_LIST#',
  /** A tenant's webhook endpoints with their sealed signing secrets, and its endpoint allocation. */
  webhookEndpoints: 'WEBHOOK_ENDPOINT#',
  /** Status events as webhooks and the events API give them, and their index partitions. */
  events: 'EVENT#',
  /** Each endpoint's webhook deliveries and delivery attempts. */
  deliveries: 'DELIVERY#',
  clients: 'CLIENT#',
  /** The failed-authentication counts. */
  authenticationThrottle: 'THROTTLE#',
  /** The reconciler's recovery index partitions. */
  recovery: 'RECOVERY#',
  /** The sandbox rail's clearing records. */
  sandboxClearing: 'SANDBOX_CLEARING#',
  /** The jtis of client assertions (private_key_jwt) used already. */
  assertionJtis: 'ASSERTION_JTI#',
  /** The jtis of DPoP proofs used already. */
  dpopJtis: 'DPOP_JTI#',
  /** The signing key schedule (one item, SIGNING_KEYS / SCHEDULE). */
  signingKeys: 'SIGNING_KEYS',
  /** WEBHOOK_INDEX's partitions of the webhook deliveries waiting for an attempt: each endpoint's queue, and the queue markers. */
  webhookDue: 'WEBHOOK_DUE#',
  /** Credit transfer batches (pain.001 or JSON), per tenant. */
  batches: 'BATCH#',
  /** The pain.001 message ids each tenant has used. */
  batchMessages: 'BATCH_MESSAGE#',
  /** Each tenant's payment controls, one item per version. */
  paymentControls: 'PAYMENT_CONTROLS#',
  /** A tenant's batches in the list index (listByTenant, overloaded). */
  batchLists: 'BATCH_LIST#',
  /** The limit counters of each tenant's accounts, per currency and period. */
  limitUsage: 'LIMIT_USAGE#',
} as const;
export type KeyPrefix = (typeof KEY_PREFIXES)[keyof typeof KEY_PREFIXES];

/**
 * Item actions on the table itself, on the items whose partition key starts with one of
 * `prefixes` (`dynamodb:LeadingKeys`; a Query on an index is checked against the index's
 * partition key); `indexes` adds exactly the named indexes (for Query), never `index/*`. A table
 * under a customer managed key also needs its key, for exactly that use.
 */
export const tableAccess = (
  table: ITable,
  actions: readonly TableAction[],
  prefixes: readonly KeyPrefix[],
  indexes: readonly string[] = [],
): Binding => ({
  environment: { TABLE_NAME: table.tableName },
  grant: (grantee) => {
    if (prefixes.length === 0) throw new Error('A table grant names the key prefixes it covers');
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: actions.map((action) => `dynamodb:${action}`),
        resources: [table.tableArn, ...indexes.map((index) => `${table.tableArn}/index/${index}`)],
        // ForAllValues: every key of a batch or transaction must match.
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((prefix) => `${prefix}*`) },
        },
      }),
    );
    if (table.encryptionKey === undefined) return;
    const writes = actions.some((action) => TABLE_WRITES.includes(action));
    table.encryptionKey.grant(
      grantee,
      'kms:Decrypt',
      'kms:DescribeKey',
      ...(writes ? ['kms:Encrypt', 'kms:GenerateDataKey'] : []),
    );
  },
});

/**
 * Every key of the stack (the current and the next or previous one; which signs is in the signing
 * key schedule, an item of the table). Signing is granted in the key policies themselves, which
 * the account's IAM policies cannot widen.
 */
export const signingKeyAccess = (
  keys: TokenSigningKeys,
  table: ITable,
  actions: readonly SigningKeyAction[],
): Binding[] => [
  {
    environment: { SIGNING_KEY_IDS: keys.keyIds },
    grant: (grantee) => {
      keys.grant(grantee, ...actions.map((action) => `kms:${action}`));
      if (actions.includes('Sign')) keys.allowSigning(grantee.grantPrincipal);
    },
  },
  // The schedule item (SIGNING_KEYS / SCHEDULE).
  tableAccess(table, ['GetItem'], [KEY_PREFIXES.signingKeys]),
];

/** The rail the workflow runs on, as the functions read it: RAIL, and for the connector its URL and key. */
export interface RailBinding {
  /** Every workflow function: which rail the dependencies wire. */
  readonly everyFunction: Binding;
  /** The functions that call the rail: where it is and the secret they sign requests with. */
  readonly railCallers: Binding;
}

export const railAccess = (
  rail:
    | { kind: 'sandbox' }
    | {
        kind: 'connector';
        url: string;
        secret: ISecret;
        /** The secret's customer managed key, when it has one: decrypted through Secrets Manager only. */
        secretKeyArn?: string;
      },
  table: ITable,
): RailBinding =>
  rail.kind === 'sandbox'
    ? {
        everyFunction: { environment: { RAIL: 'sandbox' } },
        // The sandbox keeps its clearing records in the table, in a partition of their own.
        railCallers: tableAccess(table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.sandboxClearing]),
      }
    : {
        everyFunction: { environment: { RAIL: 'connector' } },
        railCallers: {
          environment: { CONNECTOR_URL: rail.url, CONNECTOR_SECRET_ARN: rail.secret.secretArn },
          grant: (grantee) => {
            Grant.addToPrincipal({
              grantee,
              actions: ['secretsmanager:GetSecretValue'],
              resourceArns: [rail.secret.secretArn],
            });
            if (rail.secretKeyArn !== undefined) {
              Grant.addToPrincipal({
                grantee,
                actions: ['kms:Decrypt'],
                resourceArns: [rail.secretKeyArn],
                conditions: {
                  StringEquals: { 'kms:ViaService': `secretsmanager.${Aws.REGION}.amazonaws.com` },
                },
              });
            }
          },
        },
      };

/**
 * Which workflow task functions call the rail (and so may read the connector secret). A task
 * added to WORKFLOW_FUNCTIONS fails the type check until it has its line here. The reconciler
 * calls the rail too (lib/constructs/lifecycle-workflow.ts).
 */
export const TASKS_CALLING_THE_RAIL: Readonly<Record<keyof typeof WORKFLOW_FUNCTIONS, boolean>> = {
  validateCheckAndSubmit: true,
  submitToClearing: true,
  // Clearing outcomes, and the recall of a cancelled transfer.
  pollClearing: true,
  publishStatusEvents: false,
  parkTransfer: false,
};

/**
 * The most connector calls one invocation of a task makes (lambdas/domain/credit-transfers/
 * lifecycle-steps.ts): the profile check and the submission; a recall and the clearing status.
 * Each call's deadline is its share of the function's timeout (connectorDeadlineMs), so the calls
 * together always end before the function does.
 */
export const CONNECTOR_CALLS_PER_INVOCATION: Readonly<Record<keyof typeof WORKFLOW_FUNCTIONS, number>> = {
  validateCheckAndSubmit: 2,
  submitToClearing: 1,
  pollClearing: 2,
  publishStatusEvents: 0,
  parkTransfer: 0,
};

/** Time of a task's invocation kept for the table reads and writes around its connector calls. */
export const TABLE_MARGIN_MS = 1500;

/** Each connector call's deadline (CONNECTOR_DEADLINE_MS): an equal share of what the table leaves of the timeout. */
export const connectorDeadlineMs = (functionTimeoutMs: number, calls: number): number =>
  Math.floor((functionTimeoutMs - TABLE_MARGIN_MS) / calls);

/** The list cursors' secret: derived by one GenerateMac per container, never read out of KMS. */
export const cursorKeyAccess = (key: ListCursorKey): Binding => ({
  environment: { LIST_CURSOR_KEY_ID: key.key.keyId },
  grant: (grantee) => {
    key.key.grant(grantee, 'kms:GenerateMac');
    key.allowMac(grantee.grantPrincipal);
  },
});

/** Seals new webhook signing secrets (GenerateDataKey): creation and rotation only. */
export const webhookSecretSealing = (key: WebhookSecretKey): Binding => ({
  environment: { WEBHOOK_SECRET_KEY_ID: key.key.keyId },
  grant: (grantee) => key.allowSealing(grantee),
});

/** Opens sealed webhook signing secrets (Decrypt): the functions that sign deliveries only. */
export const webhookSecretOpening = (key: WebhookSecretKey): Binding => ({
  environment: { WEBHOOK_SECRET_KEY_ID: key.key.keyId },
  grant: (grantee) => key.allowOpening(grantee),
});

/**
 * Wakes the retry sender through its queue: SendMessage only (the queue is SQS-managed encrypted,
 * so no key is involved; the URL comes from the environment, so no GetQueueUrl or attributes).
 */
export const webhookWakeUps = (queue: IQueue): Binding => ({
  environment: { WEBHOOK_WAKE_UP_QUEUE_URL: queue.queueUrl },
  grant: (grantee) =>
    Grant.addToPrincipal({ grantee, actions: ['sqs:SendMessage'], resourceArns: [queue.queueArn] }),
});

/** Lets a function start lifecycle executions, and tells it which state machine. */
export const workflowAccess = (stateMachine: IStateMachine): Binding => ({
  environment: { STATE_MACHINE_ARN: stateMachine.stateMachineArn },
  grant: (grantee) =>
    Grant.addToPrincipal({
      grantee,
      actions: ['states:StartExecution'],
      resourceArns: [stateMachine.stateMachineArn],
    }),
});

/** Lets a function invoke exactly `fn` (asynchronously), and names it in `variable`. */
const functionInvocation = (fn: IFunction, variable: string): Binding => ({
  environment: { [variable]: fn.functionName },
  grant: (grantee) =>
    Grant.addToPrincipal({
      grantee,
      actions: ['lambda:InvokeFunction'],
      // The unqualified ARN the invocation names: no version or alias wildcard.
      resourceArns: [fn.functionArn],
    }),
});

/** Lets a function invoke the batch lifecycle starter (asynchronously), and tells it which function. */
export const batchLifecyclesInvocation = (fn: IFunction): Binding =>
  functionInvocation(fn, 'BATCH_LIFECYCLES_FUNCTION');

/**
 * Lets a function announce a transfer held for approval: invoke the lifecycle's publish step
 * function (asynchronously) outside any execution, and tells it which function. No workflow runs
 * for the transfer while it waits, and the status events still come from that function alone.
 */
export const pendingAnnouncement = (fn: IFunction): Binding =>
  functionInvocation(fn, 'PUBLISH_STATUS_EVENTS_FUNCTION');

/**
 * The batch lifecycle starter reads the batch item (BATCH#, which holds its count: the paymentIds
 * derive from it) and starts one execution per transfer, or announces one held for approval; it
 * reads a transfer only to count it against its tenant's limits.
 */
export const BATCH_LIFECYCLES_BINDINGS = (
  table: ITable,
  lifecycle: IStateMachine,
  statusPublisher: IFunction,
): readonly Binding[] => [
  tableAccess(table, ['GetItem'], [KEY_PREFIXES.batches]),
  // A batch whose tenant has limits: each transfer is read and counted (conditional updates of
  // its counters, read to explain a refusal), then the decision written on the transfer.
  tableAccess(table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.creditTransfers, KEY_PREFIXES.limitUsage]),
  workflowAccess(lifecycle),
  pendingAnnouncement(statusPublisher),
];

export const tokenClaims = (resources: ServiceResources): Binding => ({
  environment: { ISSUER: resources.issuer, AUDIENCE: resources.audience },
});

/** What the token function and the authorizer both apply: secrets allowed, DPoP required. */
export const clientAuthentication = (resources: ServiceResources): Binding => ({
  environment: {
    CLIENT_SECRETS: String(resources.clientSecrets),
    REQUIRE_DPOP: String(resources.requireDpop),
  },
});

/** The token function makes and checks DPoP server nonces with this secret, when there is one. */
export const dpopNonces = (resources: ServiceResources): Binding =>
  resources.dpopNonceSecret === undefined
    ? { environment: {} }
    : {
        environment: { DPOP_NONCE_SECRET_ARN: resources.dpopNonceSecret.secretArn },
        grant: (grantee) =>
          Grant.addToPrincipal({
            grantee,
            actions: ['secretsmanager:GetSecretValue'],
            resourceArns: [(resources.dpopNonceSecret as ISecret).secretArn],
          }),
      };

type Bindings = (resources: ServiceResources) => readonly Binding[];

/**
 * Every route's function, by operationId, with exactly what it needs (least privilege).
 * A route missing here fails synthesis: a new route adds one line.
 */
export const ROUTE_BINDINGS: Readonly<Record<string, Bindings>> = {
  // Sign, and read the public key once per container for the tokens' `kid`. Reads the client
  // (CLIENT#<id>) and the schedule (SIGNING_KEYS); writes only the failed-authentication counts
  // (THROTTLE#<id> / SOURCE#<address>, TTL attribute expiresAt), never a client.
  issueToken: (r) => [
    tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.clients, KEY_PREFIXES.authenticationThrottle]),
    tableAccess(r.table, ['UpdateItem'], [KEY_PREFIXES.authenticationThrottle]),
    // One conditional put per client assertion and DPoP proof: its jti, used once.
    tableAccess(r.table, ['PutItem'], [KEY_PREFIXES.assertionJtis, KEY_PREFIXES.dpopJtis]),
    ...signingKeyAccess(r.signingKey, r.table, ['Sign', 'GetPublicKey']),
    tokenClaims(r),
    clientAuthentication(r),
    dpopNonces(r),
  ],
  getJsonWebKeySet: (r) => [...signingKeyAccess(r.signingKey, r.table, ['GetPublicKey']), tokenClaims(r)],
  // The discovery document only names URLs under the issuer: no key.
  getOpenIdConfiguration: (r) => [tokenClaims(r), clientAuthentication(r)],
  getAuthorizationServerMetadata: (r) => [tokenClaims(r), clientAuthentication(r)],
  // Read only: the list indexes, the page's transfers by key, one by paymentId.eq.
  listCreditTransfers: (r) => [
    tableAccess(
      r.table,
      ['Query'],
      [KEY_PREFIXES.creditTransferLists],
      Object.values(LIST_INDEXES).map((index) => index.indexName),
    ),
    tableAccess(r.table, ['GetItem', 'BatchGetItem'], [KEY_PREFIXES.creditTransfers]),
    cursorKeyAccess(r.cursorKey),
  ],
  // The tenant's current payment controls; for a rule on new creditors, the creditor's transfers
  // (its list partition, then each one's status).
  // Counted against limits: each counter by a conditional update (read to explain a refusal), then
  // the decision on the transfer by a conditional update.
  initiateCreditTransfer: (r) => [
    tableAccess(r.table, ['PutItem', 'GetItem', 'UpdateItem'], [KEY_PREFIXES.creditTransfers]),
    tableAccess(r.table, ['UpdateItem', 'GetItem'], [KEY_PREFIXES.limitUsage]),
    tableAccess(r.table, ['Query'], [KEY_PREFIXES.paymentControls]),
    tableAccess(
      r.table,
      ['Query'],
      [KEY_PREFIXES.creditTransferLists],
      [LIST_INDEXES.creditorAccountId.indexName],
    ),
    workflowAccess(r.lifecycle),
    // A transfer held for approval: its change to Pending announced, no workflow started.
    pendingAnnouncement(r.statusPublisher),
  ],
  // Records the request by a conditional update, reads to explain a refusal, starts the workflow.
  cancelCreditTransfer: (r) => [
    tableAccess(r.table, ['UpdateItem', 'GetItem'], [KEY_PREFIXES.creditTransfers]),
    workflowAccess(r.lifecycle),
  ],
  // Reads the transfer, appends a decision by a conditional update, then moves it on: an approved
  // one starts its lifecycle as an initiation does (counted first, when a limit's breach held it).
  decideCreditTransferApproval: (r) => [
    tableAccess(r.table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.creditTransfers]),
    tableAccess(r.table, ['UpdateItem', 'GetItem'], [KEY_PREFIXES.limitUsage]),
    workflowAccess(r.lifecycle),
  ],
  // The batch item (which transfers its rules held), then each held transfer as the single decision.
  decideCreditTransferBatchApproval: (r) => [
    tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.batches]),
    tableAccess(r.table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.creditTransfers]),
    workflowAccess(r.lifecycle),
  ],
  listCreditTransferApprovals: (r) => [tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.creditTransfers])],
  getCreditTransferStatus: (r) => [tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.creditTransfers])],
  // Stores the batch, claims its MsgId, stores each transfer (conditional puts), marks it stored,
  // and asks the batch lifecycle starter to start the workflows after it has answered. A batch
  // whose MsgId is another's is removed while it holds nothing (DeleteItem, batches only). The
  // tenant's payment controls, read once; for a rule on new creditors, as the initiation does.
  submitCreditTransferBatch: (r) => [
    tableAccess(
      r.table,
      ['PutItem', 'GetItem', 'UpdateItem'],
      [KEY_PREFIXES.creditTransfers, KEY_PREFIXES.batches, KEY_PREFIXES.batchMessages],
    ),
    tableAccess(r.table, ['DeleteItem'], [KEY_PREFIXES.batches]),
    tableAccess(r.table, ['Query'], [KEY_PREFIXES.paymentControls]),
    tableAccess(
      r.table,
      ['Query'],
      [KEY_PREFIXES.creditTransferLists],
      [LIST_INDEXES.creditorAccountId.indexName],
    ),
    batchLifecyclesInvocation(r.batchLifecycles),
  ],
  // The batch, then its transfers a hundred at a time.
  getCreditTransferBatch: (r) => [
    tableAccess(r.table, ['GetItem', 'BatchGetItem'], [KEY_PREFIXES.creditTransfers, KEY_PREFIXES.batches]),
  ],
  // The list index's batch partition, the page's batch items by key, a message id's claim.
  listCreditTransferBatches: (r) => [
    tableAccess(r.table, ['Query'], [KEY_PREFIXES.batchLists], [LIST_INDEXES.all.indexName]),
    tableAccess(r.table, ['GetItem', 'BatchGetItem'], [KEY_PREFIXES.batches]),
    tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.batchMessages]),
    cursorKeyAccess(r.cursorKey),
  ],
  // The transfer, or the batch and its transfers (as the batch's pain.002 reads them).
  getCreditTransferNotification: (r) => [tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.creditTransfers])],
  getCreditTransferBatchNotification: (r) => [
    tableAccess(r.table, ['GetItem', 'BatchGetItem'], [KEY_PREFIXES.creditTransfers, KEY_PREFIXES.batches]),
  ],
  // Webhook endpoints (one partition per tenant) and the events API (WEBHOOK_INDEX, per tenant).
  // The tenant's endpoint allocation (Get, Update; see keys.ts) holds the limit of endpoints.
  createWebhookEndpoint: (r) => [
    tableAccess(r.table, ['Query', 'GetItem', 'PutItem', 'UpdateItem'], [KEY_PREFIXES.webhookEndpoints]),
    webhookSecretSealing(r.webhookSecretKey),
  ],
  listWebhookEndpoints: (r) => [
    tableAccess(r.table, ['Query'], [KEY_PREFIXES.webhookEndpoints]),
    cursorKeyAccess(r.cursorKey),
  ],
  getWebhookEndpoint: (r) => [tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.webhookEndpoints])],
  deleteWebhookEndpoint: (r) => [
    tableAccess(r.table, ['GetItem', 'DeleteItem', 'UpdateItem'], [KEY_PREFIXES.webhookEndpoints]),
  ],
  // Seals the new secret; the one it replaces stays sealed as it is, never opened here.
  rotateWebhookSecret: (r) => [
    tableAccess(r.table, ['GetItem', 'PutItem'], [KEY_PREFIXES.webhookEndpoints]),
    webhookSecretSealing(r.webhookSecretKey),
  ],
  // The endpoint, then its attempts.
  listWebhookDeliveries: (r) => [
    tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.webhookEndpoints]),
    tableAccess(r.table, ['Query'], [KEY_PREFIXES.deliveries]),
  ],
  // The endpoint, the events (by id, or a page of them), and a delivery queued for each.
  redeliverWebhookEvents: (r) => [
    tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.webhookEndpoints]),
    tableAccess(r.table, ['GetItem', 'Query'], [KEY_PREFIXES.events], [WEBHOOK_INDEX.indexName]),
    tableAccess(r.table, ['PutItem'], [KEY_PREFIXES.deliveries]),
  ],
  // The tenant's events through the index; with paymentId.eq, the transfer's history (which names
  // its events) and those events by key.
  listEvents: (r) => [
    tableAccess(r.table, ['Query', 'BatchGetItem'], [KEY_PREFIXES.events], [WEBHOOK_INDEX.indexName]),
    tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.creditTransfers]),
    cursorKeyAccess(r.cursorKey),
  ],
  // The versions of the tenant's payment controls: the newest by a query, a new one by a conditional put.
  getPaymentControls: (r) => [tableAccess(r.table, ['Query'], [KEY_PREFIXES.paymentControls])],
  putPaymentControls: (r) => [tableAccess(r.table, ['Query', 'PutItem'], [KEY_PREFIXES.paymentControls])],
  listPaymentControlsVersions: (r) => [tableAccess(r.table, ['Query'], [KEY_PREFIXES.paymentControls])],
  // The current controls, then the account's counters of the current day and month.
  getPaymentControlsUsage: (r) => [
    tableAccess(r.table, ['Query'], [KEY_PREFIXES.paymentControls]),
    tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.limitUsage]),
  ],
  getOpenApiDocument: () => [],
  getReferencePage: () => [],
  getReferencePageScript: () => [],
};

/**
 * The authorizer verifies tokens: the public keys, the issuer and audience they must name, and
 * the client's record (CLIENT#<id>, GetItem), so a disabled client's tokens stop.
 */
export const AUTHORIZER_BINDINGS: Bindings = (r) => [
  ...signingKeyAccess(r.signingKey, r.table, ['GetPublicKey']),
  tableAccess(r.table, ['GetItem'], [KEY_PREFIXES.clients]),
  // The jti of each DPoP proof, used once (one conditional put per call with a bound token).
  tableAccess(r.table, ['PutItem'], [KEY_PREFIXES.dpopJtis]),
  tokenClaims(r),
  clientAuthentication(r),
];

export const routeBindings = (operationId: string): Bindings => {
  const bindings = ROUTE_BINDINGS[operationId];
  if (!bindings) {
    throw new Error(`lib/function-bindings.ts: no bindings for operation ${operationId}; add its line`);
  }
  return bindings;
};
