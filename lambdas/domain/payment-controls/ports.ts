import type { PaymentControls } from './payment-controls.ts';

/** One stored version of a tenant's controls: versions count from 1, each kept for good. */
export interface PaymentControlsVersion {
  version: number;
  controls: PaymentControls;
  /** The client that stored it. */
  clientId: string;
  createdAt: string;
}

export interface PaymentControlsStore {
  /** The newest version, or undefined before the first. */
  current(tenant: string): Promise<PaymentControlsVersion | undefined>;
  /**
   * Stores `version` if no version of that number exists yet (a conditional write): false when
   * another change took the number first.
   */
  add(tenant: string, version: PaymentControlsVersion): Promise<boolean>;
  /** Versions newest first, those below `before` when given, at most `limit`. */
  list(tenant: string, options: { before?: number; limit: number }): Promise<PaymentControlsVersion[]>;
}
