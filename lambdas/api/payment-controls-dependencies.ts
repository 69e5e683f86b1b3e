import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbPaymentControlsStore } from '#adapters/payment-controls/payment-controls-store';
import { systemClock } from '#domain/commons/ports';
import type { PaymentControlsDependencies } from '#domain/payment-controls/manage-payment-controls';

let wired: PaymentControlsDependencies | undefined;

/** The real adapters of the payment controls operations, built once per container on first use. */
export const paymentControlsDependencies = (): PaymentControlsDependencies => {
  wired ??= { controls: new DynamoDbPaymentControlsStore(documentClient(), tableName()), clock: systemClock };
  return wired;
};
