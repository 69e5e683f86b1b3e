import type { CreditTransferRequest, CreditTransferStatus, ServicerHeaders } from './credit-transfer.ts';

/** One entry of a transfer's history: every status change, who caused it, and when. */
export interface StatusChange {
  status: CreditTransferStatus;
  statusReason?: string;
  date: string;
  /** The client id that caused the change, or `rail` / `workflow` for the service itself. */
  actor: string;
}

/** A credit transfer as the service keeps it. */
export interface CreditTransferRecord {
  tenant: string;
  paymentId: string;
  clientId: string;
  /** Initiation time, ISO 8601 with milliseconds; never changes. */
  createdAt: string;
  status: CreditTransferStatus;
  statusReason?: string;
  /** Time of the current status (the `date` of the status report). */
  statusDate: string;
  /** Fingerprint of the initiation request, to tell a replay from a reused idempotency key. */
  requestHash: string;
  idempotencyKey?: string;
  servicer: ServicerHeaders;
  /** The transfer exactly as the client sent it. */
  transfer: CreditTransferRequest;
  history: StatusChange[];
}

export interface CreditTransferStore {
  /** Stores a new transfer in one conditional write; `false` when its paymentId is taken already. */
  create(record: CreditTransferRecord): Promise<boolean>;
  /** The transfer, read strongly consistent, or undefined (also for another tenant's id). */
  get(tenant: string, paymentId: string): Promise<CreditTransferRecord | undefined>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
