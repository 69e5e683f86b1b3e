import * as z from 'zod/mini';
import { described, optionalField } from '../commons/text.ts';
import {
  creditTransferRequestSchema,
  creditTransferStatusSchema,
} from '../credit-transfers/credit-transfer.ts';
import { BATCH_PAGE_SIZE } from './batch-view.ts';
import { MAX_BATCH_TRANSACTIONS } from './submit-batch.ts';

/** The API's batch shapes, for the OpenAPI document and the SDK's types (the use case checks the request itself). */
const named = <T extends z.ZodMiniType>(schema: T, id: string): T => schema.check(z.meta({ id }));

export const batchRequestSchema = named(
  z.strictObject({
    creditTransfers: described(
      z.array(creditTransferRequestSchema).check(z.minLength(1), z.maxLength(MAX_BATCH_TRANSACTIONS)),
      `The credit transfers, each exactly the body of a single initiation; 1 to ${MAX_BATCH_TRANSACTIONS}.`,
    ),
  }),
  'CreditTransferBatchRequest',
);

const batchFields = {
  batchId: described(z.string(), 'Identification of the batch (a UUID).'),
  status: described(
    z.enum(['Accepted', 'Incomplete']),
    '`Accepted` once every transfer is stored; `Incomplete` if storing was interrupted, until the same request is sent again.',
  ),
  count: described(z.int(), 'How many credit transfers the batch holds.'),
  createdAt: described(z.string(), 'When the batch was accepted (ISO 8601, UTC).'),
  messageId: described(z.string(), "The message's GrpHdr/MsgId (for JSON, the batchId without hyphens)."),
  messageName: described(
    z.string(),
    '`pain.001.001.09`, `pain.001.001.03`, or `CreditTransferBatchJSON` for a JSON batch.',
  ),
};

export const batchAcceptedSchema = named(
  z.strictObject({
    ...batchFields,
    creditTransfers: described(
      z.array(z.strictObject({ paymentId: z.string() })),
      "Each transfer's paymentId, in message order.",
    ),
  }),
  'CreditTransferBatchAccepted',
);

export const batchPageSchema = named(
  z.strictObject({
    ...batchFields,
    creditTransfers: described(
      z
        .array(
          z.strictObject({
            paymentId: z.string(),
            status: creditTransferStatusSchema,
            statusReason: optionalField(z.string(), 'Reason attached to the status.'),
            statusReasonCode: optionalField(z.string(), "The reason's ISO ExternalStatusReason1Code."),
            date: described(z.string(), 'When the status was reached.'),
          }),
        )
        .check(z.maxLength(BATCH_PAGE_SIZE)),
      `Up to ${BATCH_PAGE_SIZE} transfers with their current statuses, in message order.`,
    ),
    next: optionalField(z.string(), 'The `cursor` of the next page; absent on the last one.'),
  }),
  'CreditTransferBatch',
);
