import { describe, expect, it } from 'vitest';
import type { CreditTransferStatus } from '#domain/credit-transfers/credit-transfer';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import { batchNotification, camt054Document } from '#domain/iso20022/camt054';
import type { BatchPaymentGroup, BatchRecord, BatchStore } from '#domain/iso20022/ports';
import { batchPaymentIds } from '#domain/iso20022/submit-batch';
import { minimalCreditTransfer } from '../../fixtures/credit-transfers.ts';
import { expectValidIso20022 } from '../../support/iso20022-schemas.ts';

const BATCH_ID = '3f2c8a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b';
const SETTLED = 'AcceptedSettlementCompleted';

/** A stored batch of these groups, whose transfers are `transfers` in message order. */
const batchOf = (groups: BatchPaymentGroup[]): BatchRecord =>
  ({
    tenant: 'acme',
    batchId: BATCH_ID,
    createdAt: '2026-12-07T09:00:00.000Z',
    count: groups.reduce((sum, group) => sum + group.count, 0),
    message: { messageId: 'PAYROLL-1', messageName: 'pain.001.001.09', groups },
  }) as unknown as BatchRecord;

const transfer = (
  batch: BatchRecord,
  position: number,
  options: {
    status?: CreditTransferStatus;
    amount: string;
    account: string;
    currency?: string;
    group: string;
  },
): CreditTransferRecord => {
  const paymentId = batchPaymentIds(batch)[position] as string;
  const status = options.status ?? SETTLED;
  return {
    tenant: 'acme',
    paymentId,
    clientId: 'acme-client',
    createdAt: '2026-12-07T09:00:00.000Z',
    status,
    statusDate: `2026-12-07T09:00:0${position}.000Z`,
    transfer: minimalCreditTransfer({
      amount: options.amount,
      currency: options.currency ?? 'EUR',
      debtorAccountId: options.account,
    }),
    origin: {
      messageId: 'PAYROLL-1',
      messageName: 'pain.001.001.09',
      paymentInformationId: options.group,
      endToEndId: `E2E-${position}`,
    },
    batch: { batchId: BATCH_ID, position },
    history: [{ status, date: `2026-12-07T09:00:0${position}.000Z`, actor: 'rail' }],
  } as unknown as CreditTransferRecord;
};

const notificationOf = async (batch: BatchRecord, records: CreditTransferRecord[]) => {
  const store = {
    get: async () => batch,
    transfers: async () => records,
  } as unknown as BatchStore;
  const xml = camt054Document(await batchNotification(store, { tenant: 'acme', batchId: BATCH_ID }));
  await expectValidIso20022(xml, 'camt.054.001.08');
  return xml;
};

const entriesOf = (xml: string) => xml.match(/<Ntry>.*?<\/Ntry>/gs) ?? [];
const batchOfEntry = (entry: string) => /<Btch>(.*?)<\/Btch>/s.exec(entry)?.[1];

describe('camt.054 batch booking', () => {
  it('books the settled transfers of a group that asked for batch booking as one entry, and only those', async () => {
    // A group refused whole before it: its transfers were never stored, and take no place.
    const batch = batchOf([
      { paymentInformationId: 'SINGLES', count: 2, batchBooking: false },
      {
        paymentInformationId: 'LATE',
        count: 0,
        rejection: {
          statusReasonCode: 'DT01',
          statusReason: 'x',
          additionalInformation: 'x',
          transactions: 2,
        },
      },
      { paymentInformationId: 'SALARIES', count: 3, batchBooking: true },
    ]);
    const xml = await notificationOf(batch, [
      transfer(batch, 0, { amount: '7.00', account: 'ACC-2', group: 'SINGLES' }),
      transfer(batch, 1, { amount: '8.00', account: 'ACC-2', group: 'SINGLES' }),
      transfer(batch, 2, { amount: '1000.10', account: 'ACC-1', group: 'SALARIES' }),
      transfer(batch, 3, { amount: '0.9', account: 'ACC-1', group: 'SALARIES' }),
      // Not settled yet: not booked, and not counted in the batch entry.
      transfer(batch, 4, {
        amount: '5.00',
        account: 'ACC-1',
        group: 'SALARIES',
        status: 'AcceptedSettlementInProcess',
      }),
    ]);

    const entries = entriesOf(xml);
    expect(entries).toHaveLength(3);
    const [firstSingle, secondSingle, salaries] = entries as [string, string, string];
    for (const [index, single] of [firstSingle, secondSingle].entries()) {
      expect(batchOfEntry(single)).toBeUndefined();
      expect(single.match(/<TxDtls>/g)).toHaveLength(1);
      expect(single).toContain(`<EndToEndId>E2E-${index}</EndToEndId>`);
    }
    expect(salaries).toContain('<Amt Ccy="EUR">1001.00</Amt>');
    expect(batchOfEntry(salaries)).toBe(
      '<MsgId>PAYROLL-1</MsgId><PmtInfId>SALARIES</PmtInfId><NbOfTxs>2</NbOfTxs><TtlAmt Ccy="EUR">1001.00</TtlAmt><CdtDbtInd>DBIT</CdtDbtInd>',
    );
    expect(salaries.match(/<TxDtls>/g)).toHaveLength(2);
    expect(salaries).toContain('<EndToEndId>E2E-2</EndToEndId>');
    expect(salaries).toContain('<EndToEndId>E2E-3</EndToEndId>');
    expect(salaries).not.toContain('E2E-4');
    // Booked when its last booked transfer settled.
    expect(salaries).toContain('<BookgDt><DtTm>2026-12-07T09:00:03.000Z</DtTm></BookgDt>');
  });

  it('books a group paying in two currencies once per currency, and keeps a reference per group that settlements do not change', async () => {
    const batch = batchOf([
      { paymentInformationId: 'MIXED', count: 3, batchBooking: true },
      { paymentInformationId: 'OTHER', count: 1, batchBooking: true },
    ]);
    const mixed = [
      transfer(batch, 0, { amount: '1.00', account: 'ACC-1', group: 'MIXED' }),
      transfer(batch, 1, { amount: '2.00', account: 'ACC-1', group: 'MIXED', currency: 'USD' }),
      transfer(batch, 2, { amount: '3.00', account: 'ACC-1', group: 'MIXED' }),
    ];
    const other = transfer(batch, 3, { amount: '4.00', account: 'ACC-1', group: 'OTHER' });
    const entries = entriesOf(await notificationOf(batch, [...mixed, other]));
    expect(entries.map((entry) => /<Amt Ccy="[A-Z]+">[^<]+<\/Amt>/.exec(entry)?.[0])).toEqual([
      '<Amt Ccy="EUR">4.00</Amt>',
      '<Amt Ccy="USD">2.00</Amt>',
      '<Amt Ccy="EUR">4.00</Amt>',
    ]);
    const references = entries.map((entry) => /<NtryRef>([^<]+)<\/NtryRef>/.exec(entry)?.[1]);
    expect(new Set(references).size).toBe(3);

    // Before the third transfer settled: the same group's entry under the same reference.
    const earlier = entriesOf(
      await notificationOf(batch, [
        mixed[0] as CreditTransferRecord,
        mixed[1] as CreditTransferRecord,
        { ...(mixed[2] as CreditTransferRecord), status: 'AcceptedSettlementInProcess' },
        other,
      ]),
    );
    expect(earlier[0]).toContain('<Amt Ccy="EUR">1.00</Amt>');
    expect(/<NtryRef>([^<]+)<\/NtryRef>/.exec(earlier[0] as string)?.[1]).toBe(references[0]);
  });

  it('books each transfer alone for a batch stored before batch booking was kept', async () => {
    const batch = batchOf([{ paymentInformationId: 'OLD', count: 2 }]);
    const entries = entriesOf(
      await notificationOf(batch, [
        transfer(batch, 0, { amount: '1.00', account: 'ACC-1', group: 'OLD' }),
        transfer(batch, 1, { amount: '2.00', account: 'ACC-1', group: 'OLD' }),
      ]),
    );
    expect(entries).toHaveLength(2);
    expect(entries.map(batchOfEntry)).toEqual([undefined, undefined]);
  });
});
