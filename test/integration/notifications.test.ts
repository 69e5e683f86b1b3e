import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { expectValidIso20022 } from '../support/iso20022-schemas.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';
import { eventually } from './support/webhook-receiver.ts';

const BATCHES = '/v1/payments/credit-transfer-batches';
const TRANSFERS = '/v1/payments/credit-transfers';

const service = useLocalService({ token: 'transactions:read transactions:write' });

/** The notification, checked valid against ISO's camt.054.001.08 schema. */
const notification = async (path: string, token = service.token) => {
  const reply = await callApi(service.baseUrl, path, { token });
  expect(reply.status, String(reply.body)).toBe(200);
  expect(reply.headers.get('content-type')).toContain('application/xml');
  const xml = String(reply.body);
  await expectValidIso20022(xml, 'camt.054.001.08');
  return xml;
};

const entriesOf = (xml: string) => xml.match(/<Ntry>.*?<\/Ntry>/gs) ?? [];

const statusOf = async (paymentId: string) =>
  (await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: service.token })).body.status;

/**
 * The example pain.001 (two groups: SALARIES-DEC, two transfers from one account that settle, and
 * SUPPLIERS-DEC, refused for its account), executed today, under a MsgId of its own, each group's
 * `BtchBookg` as given (`undefined`: not written). Answers once every transfer is final.
 */
const submitExample = async (batchBooking: 'true' | 'false' | undefined) => {
  const messageId = `CAMT-${randomUUID().slice(0, 8)}`;
  const xml = (await readFile('examples/pain.001.001.09.xml', 'utf8'))
    .replaceAll('2026-12-01', new Date().toISOString().slice(0, 10))
    .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>${messageId}</MsgId>`)
    .replaceAll(
      '<PmtMtd>TRF</PmtMtd>',
      `<PmtMtd>TRF</PmtMtd>${batchBooking === undefined ? '' : `<BtchBookg>${batchBooking}</BtchBookg>`}`,
    );
  const accepted = await callApi(service.baseUrl, BATCHES, {
    token: service.token,
    rawBody: xml,
    headers: { 'Content-Type': 'application/xml' },
  });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
  const { batchId, creditTransfers } = accepted.body as {
    batchId: string;
    creditTransfers: { paymentId: string }[];
  };
  await eventually(async () => {
    const statuses = await Promise.all(creditTransfers.map(({ paymentId }) => statusOf(paymentId)));
    return statuses.every((status) => ['AcceptedSettlementCompleted', 'Rejected'].includes(status))
      ? true
      : undefined;
  }, `the transfers of ${batchId} final`);
  return { messageId, batchId, creditTransfers };
};

describe('camt.054 debit notifications', () => {
  it("a batch's notification books each settled transfer with its original references, per debtor account, when the file asks for no batch booking", async () => {
    const { messageId, batchId, creditTransfers } = await submitExample('false');
    const camt = await notification(`${BATCHES}/${batchId}/notification`);
    expect(camt).toContain('<BkToCstmrDbtCdtNtfctn>');
    // Two payment groups from two debtor accounts: two account notifications, the refused one without entry.
    expect(camt.match(/<Ntfctn>/g)).toHaveLength(2);
    const entries = entriesOf(camt);
    expect(entries).toHaveLength(2);
    expect(camt).not.toContain('<Btch>');
    const [first] = entries;
    expect(first).toContain('<Amt Ccy="EUR">3150.25</Amt>');
    expect(first).toContain('<CdtDbtInd>DBIT</CdtDbtInd>');
    expect(first).toContain('<Sts><Cd>BOOK</Cd></Sts>');
    expect(first).toContain(`<ValDt><Dt>${new Date().toISOString().slice(0, 10)}</Dt></ValDt>`);
    expect(first).toContain(
      `<AcctSvcrRef>${creditTransfers[0]?.paymentId.replaceAll('-', '')}</AcctSvcrRef>`,
    );
    expect(first).toContain(
      '<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>',
    );
    expect(first).toContain(
      `<Refs><MsgId>${messageId}</MsgId><AcctSvcrRef>${creditTransfers[0]?.paymentId.replaceAll('-', '')}</AcctSvcrRef><PmtInfId>SALARIES-DEC</PmtInfId><InstrId>SAL-DEC-0001</InstrId><EndToEndId>E2E-SAL-DEC-0001</EndToEndId></Refs>`,
    );
    expect(camt).not.toContain('INV-2026-0457');

    const own = await notification(`${TRANSFERS}/${creditTransfers[1]?.paymentId}/notification`);
    expect(entriesOf(own)).toHaveLength(1);
    expect(own).toContain('<EndToEndId>E2E-SAL-DEC-0002</EndToEndId>');
    const refused = await notification(`${TRANSFERS}/${creditTransfers[2]?.paymentId}/notification`);
    expect(entriesOf(refused)).toEqual([]);
  });

  it('books a payment group as one batch entry when the file asks for batch booking, or leaves it to the bank by not saying', async () => {
    for (const batchBooking of ['true', undefined] as const) {
      const { messageId, batchId, creditTransfers } = await submitExample(batchBooking);
      const [first, second] = creditTransfers.map(({ paymentId }) => paymentId.replaceAll('-', ''));

      const camt = await notification(`${BATCHES}/${batchId}/notification`);
      expect(camt.match(/<Ntfctn>/g)).toHaveLength(2);
      // SALARIES-DEC: one debit of both salaries; SUPPLIERS-DEC settled nothing, so books nothing.
      const entries = entriesOf(camt);
      expect(entries, `BtchBookg ${batchBooking}`).toHaveLength(1);
      const [entry] = entries as [string];
      expect(entry).toContain(
        '<Amt Ccy="EUR">5400.75</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>',
      );
      expect(entry).toContain(
        `<Btch><MsgId>${messageId}</MsgId><PmtInfId>SALARIES-DEC</PmtInfId><NbOfTxs>2</NbOfTxs><TtlAmt Ccy="EUR">5400.75</TtlAmt><CdtDbtInd>DBIT</CdtDbtInd></Btch>`,
      );
      const details = entry.match(/<TxDtls>.*?<\/TxDtls>/gs) ?? [];
      expect(details).toHaveLength(2);
      expect(details[0]).toContain(
        `<Refs><MsgId>${messageId}</MsgId><AcctSvcrRef>${first}</AcctSvcrRef><PmtInfId>SALARIES-DEC</PmtInfId><InstrId>SAL-DEC-0001</InstrId><EndToEndId>E2E-SAL-DEC-0001</EndToEndId></Refs><Amt Ccy="EUR">3150.25</Amt>`,
      );
      expect(details[1]).toContain(`<AcctSvcrRef>${second}</AcctSvcrRef>`);
      expect(details[1]).toContain('<Amt Ccy="EUR">2250.50</Amt>');
      // The entry's own reference is the group's, not one transfer's.
      expect(entry).not.toContain(`<NtryRef>${first}</NtryRef>`);

      // A transfer's own notification still books it alone.
      const own = await notification(`${TRANSFERS}/${creditTransfers[0]?.paymentId}/notification`);
      expect(entriesOf(own)).toHaveLength(1);
      expect(own).toContain('<Amt Ccy="EUR">3150.25</Amt>');
      expect(own).not.toContain('<Btch>');
    }
  });

  it('a transfer not settled yet has a valid notification with no entry; once settled, its entry', async () => {
    const held = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer({ debtorAccountId: '001-DDA-01-hold' }),
    });
    expect(held.status).toBe(202);
    const open = await notification(`${TRANSFERS}/${held.body.paymentId}/notification`);
    expect(open).toContain('<Othr><Id>001-DDA-01-hold</Id></Othr>');
    expect(entriesOf(open)).toEqual([]);

    const settling = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      body: minimalCreditTransfer({
        currency: 'USD',
        identifiers: [{ number: 'E2E-CAMT-1', schemeName: 'EndToEndId' }],
      }),
    });
    const paymentId = settling.body.paymentId as string;
    await eventually(
      async () => ((await statusOf(paymentId)) === 'AcceptedSettlementCompleted' ? true : undefined),
      `${paymentId} settled`,
    );
    const settled = await notification(`${TRANSFERS}/${paymentId}/notification`);
    const [entry] = entriesOf(settled);
    expect(entry).toContain('<Amt Ccy="USD">125.50</Amt>');
    expect(entry).toContain('<SubFmlyCd>OTHR</SubFmlyCd>');
    expect(entry).toContain(`<MsgId>${paymentId.replaceAll('-', '')}</MsgId>`);
    expect(entry).toContain('<EndToEndId>E2E-CAMT-1</EndToEndId>');
  });

  it("answers 404 for another tenant's transfer or batch, as for an unknown one; 400 for a malformed batchId", async () => {
    const other = { clientId: 'camt-other-tenant', clientSecret: 'camt-other-secret-0123456789' };
    await createClient(service, { ...other, scope: 'transactions:read', tenant: 'camt-other' });
    const theirs = await requestToken(service.baseUrl, 'transactions:read', other);
    const mine = await callApi(service.baseUrl, BATCHES, {
      token: service.token,
      body: { creditTransfers: [minimalCreditTransfer()] },
    });
    const { batchId, creditTransfers } = mine.body as {
      batchId: string;
      creditTransfers: { paymentId: string }[];
    };
    for (const path of [
      `${BATCHES}/${batchId}/notification`,
      `${TRANSFERS}/${creditTransfers[0]?.paymentId}/notification`,
    ]) {
      expect((await callApi(service.baseUrl, path, { token: theirs })).status).toBe(404);
    }
    expect(
      (await callApi(service.baseUrl, `${BATCHES}/${randomUUID()}/notification`, { token: service.token }))
        .status,
    ).toBe(404);
    expect(
      (await callApi(service.baseUrl, `${BATCHES}/nope/notification`, { token: service.token })).status,
    ).toBe(400);
  });
});
