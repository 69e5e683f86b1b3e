import type { components, operations } from './api-types.ts';

/*
 * Named types for every request and answer, taken from the generated ones (api-types.ts, from
 * the served OpenAPI document). Interfaces rather than aliases: a compiler error then names the
 * type ("is not assignable to CreditTransferRequest") instead of spelling out its fields.
 */

type Schemas = components['schemas'];
/**
 * The fields of one schema. An interface may extend only a name, and a mapped type (rather than
 * the schema itself) makes the compiler say "required in type Fields<'CreditTransferRequest'>"
 * instead of spelling out the schema's anonymous type.
 */
type Fields<Name extends keyof Schemas> = { [Key in keyof Schemas[Name]]: Schemas[Name][Key] };
/** The element type of an array answer (an interface may extend only a name). */
type Element<List> = List extends readonly (infer Item)[] ? Item : never;

/** A credit transfer as the client sends it to `initiate`. */
export interface CreditTransferRequest extends Fields<'CreditTransferRequest'> {}
/** A credit transfer as the service shows it: the request's fields, `paymentId`, `status`, `statusReason`, `date`. */
export interface CreditTransfer extends Fields<'CreditTransfer'> {}
/** The status report: the transfer as it now is (the same shape as `CreditTransfer`). */
export interface StatusReport extends CreditTransfer {}
/**
 * The report at a final status. A `Rejected` one always carries its `statusReason` (the reason
 * code), so code that handles a rejection needs no check for a missing reason.
 */
export type FinalStatusReport =
  | (StatusReport & { status: 'Rejected'; statusReason: string })
  | (StatusReport & { status: 'AcceptedSettlementCompleted' | 'Cancelled' });
/** The body of a cancellation request. */
export interface CancellationRequest extends Fields<'CancellationRequest'> {}
/** A creditor or debtor. */
export interface PartyIdentification extends Fields<'PartyIdentification'> {}
export interface PartyIdentifier extends Fields<'PartyIdentifier'> {}
export interface Account extends Fields<'Account'> {}
export interface Agent extends Fields<'Agent'> {}
export interface AgentIdentifier extends Fields<'AgentIdentifier'> {}
export interface PaymentIdentification extends Fields<'PaymentIdentification'> {}
export interface PostalAddress extends Fields<'PostalAddress'> {}
export interface GenericTransactionCode extends Fields<'GenericTransactionCode'> {}
/** The token endpoint's answer. */
export interface TokenResponse extends Fields<'TokenResponse'> {}
/** An error body of the service (RFC 9457 problem with the spec's `error` and `error_description`). */
export interface Problem extends Fields<'Problem'> {}

/** Every status a transfer can have. */
export type PaymentStatus = Schemas['CreditTransferStatus'];
/** Every error code the service (and its token endpoint) answers with. */
export type ErrorCode = Problem['error'];

type Query<Operation extends keyof operations> = NonNullable<operations[Operation]['parameters']['query']>;
/**
 * A list's query parameters without the paging ones (`cursor`, `limit`, given as options), by the
 * list's operation: a compiler error then names `Filters<"listCreditTransfers">` rather than
 * spelling out every parameter inside an `Omit<...>`.
 */
type Filters<Operation extends keyof operations> = {
  [Key in keyof Query<Operation> as Key extends 'cursor' | 'limit' ? never : Key]: Query<Operation>[Key];
};

/** The list filters, named as the API's query parameters (`status.eq`, `debtorAccountId.eq`, ...). */
export interface ListFilters extends Filters<'listCreditTransfers'> {}

/** What every answer carries besides its body, read from the response headers. */
export interface ResponseInfo {
  /** The service's id of the request (`x-amzn-RequestId`): quote it when asking about a call. */
  readonly requestId: string | undefined;
  /** True when the service answered a repeat of an earlier request with the same idempotency key (`Idempotent-Replayed`). */
  readonly replayed: boolean;
}

/**
 * The answer of `initiate` and `cancel`: the transfer exactly as the service sent it, plus
 * `requestId` and `replayed`, which are not enumerable, so `JSON.stringify` and spreading give
 * the body alone.
 */
export type CreditTransferAnswer = CreditTransfer & ResponseInfo;

/** `status()` without `ifNoneMatch`, or with one whose report has changed. */
export interface StatusResult extends ResponseInfo {
  modified: true;
  report: StatusReport;
  /** Send it back as `ifNoneMatch` to be told when nothing changed. */
  etag: string | undefined;
}

/** `status()` with `ifNoneMatch` when the report has not changed (304): no report. */
export interface NotModifiedResult extends ResponseInfo {
  modified: false;
  report: undefined;
  etag: string;
}

/** One page of the list. */
export interface ListPage extends ResponseInfo {
  items: CreditTransfer[];
  /** `Pagination-Cursor`: give it back (with the same filters) for the next page; empty on the last page. */
  cursor: string;
  /** `Pagination-Total`: transfers matching when paging began; `10000+` style lower bounds read as the number. */
  total: number | undefined;
  /** True when `total` is a lower bound (the service stopped counting). */
  totalIsLowerBound: boolean;
}

/** What `webhooks.create` sends: the endpoint's `url`, and optionally `description` and `eventTypes`. */
export interface WebhookEndpointRequest extends Fields<'WebhookEndpointRequest'> {}
/** A webhook endpoint as the service shows it (never with its secret). */
export interface WebhookEndpoint extends Fields<'WebhookEndpoint'> {}
/** The answer of `webhooks.create`: the endpoint and, this once only, its signing `secret`. */
export interface CreatedWebhookEndpoint extends Fields<'CreatedWebhookEndpoint'> {}
/** The answer of `webhooks.rotateSecret`: the new `secret`, and until when the old one still signs. */
export interface RotatedWebhookSecret extends Fields<'RotatedWebhookSecret'> {}
/** One delivery attempt to an endpoint: event id, attempt, time, HTTP status or error, duration. */
export interface WebhookDeliveryAttempt extends Fields<'WebhookDeliveryAttempt'> {}
/** What `webhooks.redeliver` asks for: one `eventId`, or every event `since` a time. */
export interface WebhookRedeliveryRequest extends Fields<'WebhookRedeliveryRequest'> {}
/** How many events were queued again; `nextSince` when more follow than one request queues. */
export interface WebhookRedeliveryResult extends Fields<'WebhookRedeliveryResult'> {}

/** A transfer's status changed (`credit-transfer.status-changed`). */
export interface CreditTransferStatusChangedEvent extends Fields<'CreditTransferStatusChangedEvent'> {}
/** One of the client's webhook endpoints was disabled (`webhook-endpoint.disabled`). */
export interface WebhookEndpointDisabledEvent extends Fields<'WebhookEndpointDisabledEvent'> {}
/** Every transfer of a batch is final (`credit-transfer-batch.completed`): its group status and counts. */
export interface CreditTransferBatchCompletedEvent extends Fields<'CreditTransferBatchCompletedEvent'> {}
/** A transfer waits for approval (`credit-transfer.approval-required`): the rule, how many approvals, until when. */
export interface CreditTransferApprovalRequiredEvent extends Fields<'CreditTransferApprovalRequiredEvent'> {}
/** Enough approvals moved a transfer on to Received (`credit-transfer.approved`): the approvals given. */
export interface CreditTransferApprovedEvent extends Fields<'CreditTransferApprovedEvent'> {}
/** Every event the service sends and lists: narrow it by `type`. */
export type WebhookEvent =
  | CreditTransferStatusChangedEvent
  | WebhookEndpointDisabledEvent
  | CreditTransferBatchCompletedEvent
  | CreditTransferApprovalRequiredEvent
  | CreditTransferApprovedEvent;
/** Every event type. */
export type WebhookEventType = WebhookEvent['type'];

/** The events list filters, named as the API's query parameters (`type`, `paymentId.eq`, `createdAt.gte`). */
export interface EventFilters extends Filters<'listEvents'> {}

/** One page of webhook endpoints, oldest first. */
export interface WebhookEndpointPage extends ResponseInfo {
  items: WebhookEndpoint[];
  /** `Pagination-Cursor`: give it back for the next page; empty on the last page. */
  cursor: string;
}

/** One page of events, oldest first. */
export interface EventPage extends ResponseInfo {
  items: WebhookEvent[];
  /** `Pagination-Cursor`: give it back (with the same filters) for the next page; empty on the last page. */
  cursor: string;
}

/** A JSON batch: each element exactly the body of a single initiation. */
export type CreditTransferBatchRequest = Schemas['CreditTransferBatchRequest'];
/** The 202 of a batch: its id, status, count and each paymentId in message order. */
export type CreditTransferBatchAccepted = Schemas['CreditTransferBatchAccepted'];
/** A page of a batch's transfers with their current statuses and reason codes. */
export type CreditTransferBatch = Schemas['CreditTransferBatch'];
/** A batch as the list of batches shows it: status, group status and counts, without its transfers. */
export type CreditTransferBatchSummary = Schemas['CreditTransferBatchSummary'];
/** The batches list filters, named as the API's query parameters (`messageId.eq`, `createdAt.gte`, `createdAt.lte`). */
export interface BatchFilters extends Filters<'listCreditTransferBatches'> {}
/** One page of batches, newest first. */
export interface BatchPage extends ResponseInfo {
  items: CreditTransferBatchSummary[];
  /** `Pagination-Cursor`: give it back (with the same filters) for the next page; empty on the last page. */
  cursor: string;
}
/** A batch's 202, and whether it answered a submission made before (`Idempotent-Replayed`). */
export type CreditTransferBatchAnswer = CreditTransferBatchAccepted & ResponseInfo;

/** The JSON body of an operation's 200 answer, and of its request. */
type JsonAnswer<Operation extends keyof operations> = operations[Operation]['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;
type JsonBody<Operation extends keyof operations> = operations[Operation]['requestBody'] extends
  | { content: { 'application/json': infer Body } }
  | undefined
  ? Body
  : never;

/** Why a transfer waits in `Pending`: the rule that holds it, the approvals it needs and has, until when. */
export type Approval = NonNullable<CreditTransfer['approval']>;
/** One decision on a pending transfer: who, approve or reject, why, when, and the token it came with. */
export interface ApprovalDecision extends Element<JsonAnswer<'listCreditTransferApprovals'>> {}
/** What `approve` and `reject` send: the decision and, optionally, why. */
export interface ApprovalDecisionRequest extends JsonBody<'decideCreditTransferApproval'> {}

/** The tenant's payment controls: approval rules, how long a pending transfer waits, limits. */
export interface PaymentControls extends JsonAnswer<'getPaymentControls'> {}
/** What `paymentControls.put` sends: the whole document (rules and limits default to none, expiry to P7D). */
export interface PaymentControlsRequest extends JsonBody<'putPaymentControls'> {}
/** One approval rule of the payment controls. */
export type ApprovalRule = PaymentControls['approvalRules'][number];
/** One limit of the payment controls. */
export type Limit = PaymentControls['limits'][number];
/** One stored version of the payment controls: its number, ETag, who stored it and when, the document. */
export interface PaymentControlsVersion extends Element<JsonAnswer<'listPaymentControlsVersions'>> {}

/** The payment controls and the ETag to send back as `ifMatch` when changing them. */
export interface PaymentControlsResult extends ResponseInfo {
  controls: PaymentControls;
  etag: string;
}

/** The limits that apply to one account and currency, each with what its current period has used and has left. */
export interface PaymentControlsUsage extends JsonAnswer<'getPaymentControlsUsage'> {}

/** A limit of the payment controls with what the current period has used and has left. */
export type LimitUsage = Element<PaymentControlsUsage['limits']>;

/** What `approveBatch` sends: one decision for every pending transfer of the batch. */
export interface BatchApprovalRequest extends JsonBody<'decideCreditTransferBatchApproval'> {}

/** The answer of `approveBatch`: how many transfers it decided, and each it could not, with why. */
export interface BatchApprovalResult extends JsonAnswer<'decideCreditTransferBatchApproval'> {}
