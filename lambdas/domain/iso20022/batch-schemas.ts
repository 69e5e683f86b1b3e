import * as z from 'zod/mini';

const bounded = (max: number) => z.string().check(z.maxLength(max));

import { described, optionalField } from '../commons/text.ts';
import {
  creditTransferRequestSchema,
  creditTransferStatusSchema,
  statusReasonCodeSchema,
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
  batchId: described(bounded(36), 'Identification of the batch (a UUID).'),
  status: described(
    z.enum(['Accepted', 'Incomplete', 'Completed']),
    '`Accepted` once every transfer is stored; `Incomplete` if storing was interrupted, until the same request is sent again; `Completed` once every transfer is final (settled, rejected or cancelled).',
  ),
  count: described(
    z.int().check(z.gte(0), z.lte(MAX_BATCH_TRANSACTIONS)),
    'How many credit transfers the batch holds.',
  ),
  createdAt: described(bounded(35), 'When the batch was accepted (ISO 8601, UTC).'),
  messageId: described(bounded(35), "The message's GrpHdr/MsgId (for JSON, the batchId without hyphens)."),
  messageName: described(
    bounded(35),
    '`pain.001.001.09`, `pain.001.001.03`, or `CreditTransferBatchJSON` for a JSON batch.',
  ),
  rejectedPaymentGroups: optionalField(
    z
      .array(
        z.strictObject({
          paymentInformationId: described(bounded(35), "The group's PmtInfId."),
          statusReasonCode: described(bounded(4), "The reason's ISO ExternalStatusReason1Code (`DT01`)."),
          statusReason: described(bounded(35), "The reason's ISO name (`InvalidDate`)."),
          reason: described(bounded(140), 'Why, in words.'),
          transactions: described(
            z.int().check(z.gte(0), z.lte(MAX_BATCH_TRANSACTIONS)),
            'How many CdtTrfTxInf the group held; none was stored.',
          ),
        }),
      )
      .check(z.maxLength(MAX_BATCH_TRANSACTIONS)),
    "A pain.001's payment groups rejected whole while the rest was taken (a ReqdExctnDt more than 30 days past); absent when none was.",
  ),
  groupStatus: optionalField(
    z.enum(['ACCP', 'ACSC', 'PART', 'RJCT']),
    "The batch's ISO 20022 group status (its pain.002's GrpSts): `ACCP` while any transfer is open, then `ACSC` (every one settled), `PART` (some settled, some rejected or cancelled) or `RJCT` (none settled).",
  ),
  open: optionalField(
    z.int().check(z.gte(0), z.lte(MAX_BATCH_TRANSACTIONS)),
    'How many transfers are not final yet.',
  ),
  countsByStatus: optionalField(
    z.record(bounded(35), z.int().check(z.gte(0))),
    'How many transfers reached each final status.',
  ),
  countsByReasonCode: optionalField(
    z.record(bounded(4), z.int().check(z.gte(0))),
    'How many final transfers carry each ISO 20022 status reason code (rejected and cancelled ones).',
  ),
  completedAt: optionalField(bounded(35), 'When the last transfer became final (ISO 8601, UTC).'),
};

export const batchAcceptedSchema = named(
  z.strictObject({
    ...batchFields,
    creditTransfers: described(
      z.array(z.strictObject({ paymentId: bounded(36) })).check(z.maxLength(MAX_BATCH_TRANSACTIONS)),
      "Each transfer's paymentId, in message order.",
    ),
  }),
  'CreditTransferBatchAccepted',
);

/** A batch as the list of batches shows it: without its transfers. */
export const batchSummarySchema = named(z.strictObject(batchFields), 'CreditTransferBatchSummary');

export const batchPageSchema = named(
  z.strictObject({
    ...batchFields,
    creditTransfers: described(
      z
        .array(
          z.strictObject({
            paymentId: bounded(36),
            status: creditTransferStatusSchema,
            statusReason: optionalField(bounded(35), 'Reason attached to the status.'),
            statusReasonCode: optionalField(
              statusReasonCodeSchema(),
              "The reason's ISO 20022 ExternalStatusReason1Code (docs/iso20022.md).",
            ),
            date: described(bounded(35), 'When the status was reached.'),
          }),
        )
        .check(z.maxLength(BATCH_PAGE_SIZE)),
      `Up to ${BATCH_PAGE_SIZE} transfers with their current statuses, in message order.`,
    ),
    next: optionalField(bounded(10), 'The `cursor` of the next page; absent on the last one.'),
  }),
  'CreditTransferBatch',
);
