/** Failures the domain names; one middleware maps each to its HTTP problem response. */

export interface InvalidParam {
  name: string;
  reason: string;
}

export class InvalidRequestError extends Error {
  constructor(
    message: string,
    readonly invalidParams: InvalidParam[] = [],
  ) {
    super(message);
    this.name = 'InvalidRequestError';
  }
}

export class PaymentNotFoundError extends Error {
  constructor(readonly paymentId: string) {
    super(`No credit transfer with paymentId '${paymentId}'`);
    this.name = 'PaymentNotFoundError';
  }
}

export class PaymentNotCancellableError extends Error {
  constructor(
    readonly paymentId: string,
    readonly status: string,
  ) {
    super(`The credit transfer is ${status} and can no longer be cancelled`);
    this.name = 'PaymentNotCancellableError';
  }
}

export class IdempotencyKeyReusedError extends Error {
  constructor() {
    super('This idempotencyId was already used with a different request body');
    this.name = 'IdempotencyKeyReusedError';
  }
}

/** A webhook endpoint or event that is not the caller's to see: unknown, or another tenant's. */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/** A webhook request the endpoint's state refuses. */
export class WebhookConflictError extends Error {
  constructor(
    readonly code: 'webhook_endpoint_disabled' | 'too_many_webhook_endpoints',
    message: string,
  ) {
    super(message);
    this.name = 'WebhookConflictError';
  }
}

/** A batch past a limit of its own (transactions per message), answered 413 naming the limit. */
export class BatchTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatchTooLargeError';
  }
}

/** A pain.001 whose GrpHdr/MsgId the tenant already used for another message. */
export class MessageIdReusedError extends Error {
  constructor(readonly messageId: string) {
    super(`The message id (GrpHdr/MsgId) '${messageId}' was already used with a different message`);
    this.name = 'MessageIdReusedError';
  }
}

/** A change whose If-Match names a version that is no longer the current one (412). */
export class PreconditionFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PreconditionFailedError';
  }
}

/** A change to a resource that exists, sent without If-Match (428). */
export class PreconditionRequiredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PreconditionRequiredError';
  }
}

/** A request the caller's token allows, but the caller may not make (the initiator approving its own transfer). */
export class ForbiddenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenError';
  }
}

/** An approval decision the transfer's state refuses (409). */
export class ApprovalConflictError extends Error {
  constructor(
    readonly code: 'approval_already_decided' | 'payment_not_pending',
    message: string,
  ) {
    super(message);
    this.name = 'ApprovalConflictError';
  }
}
