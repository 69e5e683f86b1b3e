import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { batchKey, batchMessageKey, creditTransferKey } from '#adapters/table/keys';
import { derivedPaymentId } from '#domain/credit-transfers/payment-id';
import {
  deepPain001,
  manyElementsPain001,
  manyTransactionsPain001,
  minimalPain001,
} from '../../scripts/bench/hostile-pain001.ts';
import { callApi, type JsonReply } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const BATCHES = '/v1/payments/credit-transfer-batches';

const service = useLocalService({ token: 'transactions:read transactions:write' });

const dayOffset = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
let sequence = 0;
const uniqueId = (prefix: string) => `${prefix}-${Date.now()}-${++sequence}`;

/** The example message (two groups, three transfers) with today's date and a MsgId of its own. */
const example = async (messageId: string) =>
  (await readFile('examples/pain.001.001.09.xml', 'utf8'))
    .replaceAll('2026-12-01', dayOffset(0))
    .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>${messageId}</MsgId>`);

/**
 * The example asked for SEPA's service level, whose Latin character set refuses other letters
 * first: a message that asks for no profile, to reach the rule a test is about.
 */
const withoutSepa = (xml: string) => xml.replace(/<Cd>SEPA<\/Cd>/g, '<Cd>NURG</Cd>');

const submitXml = (xml: string, headers: Record<string, string> = {}) =>
  callApi(service.baseUrl, BATCHES, {
    token: service.token,
    rawBody: xml,
    headers: { 'Content-Type': 'application/xml', ...headers },
  });

/** Sends bytes as they are: what a client that encodes the text itself sends. */
const submitBytes = async (bytes: Uint8Array, contentType = 'application/xml') => {
  const response = await fetch(`${service.baseUrl}${BATCHES}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${service.token}`, 'Content-Type': contentType },
    body: bytes,
  });
  return { status: response.status, body: (await response.json()) as JsonReply['body'] };
};

const utf16le = (text: string, withMark: boolean) => {
  const body = Buffer.from(text, 'utf16le');
  return withMark ? Buffer.concat([Buffer.from([0xff, 0xfe]), body]) : body;
};

describe('hostile pain.001 uploads', () => {
  describe('bounds, applied before the message is parsed', () => {
    it('refuses 5 MiB of minimal transactions with 413 naming the limit of 2,000', async () => {
      const reply = await submitXml(manyTransactionsPain001(uniqueId('MANY')));
      expect(reply.status).toBe(413);
      expect(reply.body).toMatchObject({ error: 'payload_too_large', status: 413 });
      expect(reply.body.error_description).toContain('at most 2000 are taken');
    });

    it('refuses elements nested deeper than 32 levels with 400 naming the body', async () => {
      const reply = await submitXml(deepPain001(uniqueId('DEEP')));
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams).toEqual([
        { name: '(body)', reason: 'must not nest elements more than 32 levels deep' },
      ]);
    });

    it('refuses more than 200,000 elements with 413', async () => {
      const reply = await submitXml(manyElementsPain001(uniqueId('ELEMENTS')));
      expect(reply.status).toBe(413);
      expect(reply.body.error_description).toContain('200000 XML elements');
    });

    it('still takes 2,000 transfers in one group', async () => {
      const reply = await submitXml(minimalPain001(uniqueId('FULL'), 2000));
      expect(reply.status, JSON.stringify(reply.body)).toBe(202);
      expect(reply.body.count).toBe(2000);
    });
  });

  describe('a MsgId is taken only by a stored batch', () => {
    it('an idempotency key reused with another message does not burn that message’s MsgId', async () => {
      const key = uniqueId('key');
      expect((await submitXml(await example(uniqueId('FIRST')), { idempotencyId: key })).status).toBe(202);
      const second = await example(uniqueId('SECOND'));
      const refused = await submitXml(second, { idempotencyId: key });
      expect(refused.status).toBe(422);
      expect(refused.body.error).toBe('idempotency_key_reused');
      const sent = await submitXml(second);
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      expect(sent.headers.get('idempotent-replayed')).toBeNull();
    });

    it('a message refused for a used MsgId leaves its idempotency key free and no batch behind', async () => {
      const messageId = uniqueId('SHARED');
      const xml = await example(messageId);
      expect((await submitXml(xml, { idempotencyId: uniqueId('k1') })).status).toBe(202);
      const key = uniqueId('k2');
      const other = xml
        .replace('3150.25', '3150.26')
        .replace('6150.75', '6150.76')
        .replace('5400.75', '5400.76');
      const refused = await submitXml(other, { idempotencyId: key });
      expect(refused.status).toBe(422);
      expect(refused.body.error).toBe('message_id_reused');
      const claim = await service.table.get({
        TableName: 'credit-transfers',
        Key: batchMessageKey('local', messageId),
      });
      expect(claim.Item?.requestHash).toBeDefined();
      // The key names no batch: the same message under a new MsgId is taken with it.
      const renamed = other.replace(messageId, uniqueId('RENAMED'));
      const taken = await submitXml(renamed, { idempotencyId: key });
      expect(taken.status, JSON.stringify(taken.body)).toBe(202);
      expect(taken.headers.get('idempotent-replayed')).toBeNull();
    });

    it('the same message under another idempotency key is the same batch, and leaves no other', async () => {
      const xml = await example(uniqueId('TWICE'));
      const first = await submitXml(xml, { idempotencyId: uniqueId('a') });
      const key = uniqueId('b');
      const again = await submitXml(xml, { idempotencyId: key });
      expect(again.status).toBe(202);
      expect(again.body.batchId).toBe(first.body.batchId);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const keysBatch = derivedPaymentId('local', 'batch', key);
      const left = await service.table.get({
        TableName: 'credit-transfers',
        Key: batchKey('local', keysBatch),
      });
      expect(left.Item).toBeUndefined();
    });
  });

  describe('UTF-8 only', () => {
    it('refuses UTF-16 without a byte order mark before parsing, saying why', async () => {
      const xml = (await example(uniqueId('U16'))).replace('encoding="UTF-8"', 'encoding="UTF-16"');
      const reply = await submitBytes(utf16le(xml, false));
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams[0].reason).toContain('must be encoded in UTF-8');
    });

    it('refuses UTF-16 with a byte order mark, naming it', async () => {
      const xml = (await example(uniqueId('U16B'))).replace('encoding="UTF-8"', 'encoding="UTF-16"');
      const reply = await submitBytes(utf16le(xml, true));
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams).toEqual([
        {
          name: '(body)',
          reason:
            'must be encoded in UTF-8: it starts with a UTF-16 byte order mark; only UTF-8 (with or without a byte order mark) is taken',
        },
      ]);
    });

    it('refuses a declaration of another encoding over UTF-8 bytes instead of storing other characters', async () => {
      const xml = (await example(uniqueId('LATIN')))
        .replace('encoding="UTF-8"', 'encoding="ISO-8859-1"')
        .replace('Ana Ruiz', 'Ana Muñoz');
      const reply = await submitXml(xml);
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams[0].reason).toContain(
        'declares encoding="ISO-8859-1": only UTF-8 is taken',
      );
    });

    it('refuses a charset other than UTF-8 in the Content-Type', async () => {
      const reply = await submitXml(await example(uniqueId('CHARSET')), {
        'Content-Type': 'application/xml; charset=ISO-8859-1',
      });
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams[0].name).toBe('Content-Type');
    });

    it('takes UTF-8 with a byte order mark, its text exactly as sent', async () => {
      const xml = withoutSepa(await example(uniqueId('BOM'))).replace('Ana Ruiz', 'Ana Muñoz');
      const reply = await submitBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(xml)]));
      expect(reply.status, JSON.stringify(reply.body)).toBe(202);
      const status = await callApi(
        service.baseUrl,
        `/v1/payments/credit-transfers/${reply.body.creditTransfers[0].paymentId}/status`,
        { token: service.token },
      );
      expect(status.body.creditor.name).toBe('Ana Muñoz');
    });
  });

  describe('identifiers follow the text rules', () => {
    it.each([
      ['a right-to-left override', 'PAY\u202EROLL'],
      ['a tab', 'PAY\tROLL'],
      ['a next line (U+0085)', 'PAY\u0085ROLL'],
      ['a zero-width space', 'PAY\u200BROLL'],
      ['a Cyrillic letter among Latin ones', 'PAYRОLL'],
      ['full-width digits', 'PAYROLL-２０２６'],
    ])('refuses a MsgId with %s, naming it', async (_what, messageId) => {
      const reply = await submitXml(await example(messageId));
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams.map((fault: { name: string }) => fault.name)).toEqual([
        '/Document/CstmrCdtTrfInitn/GrpHdr/MsgId',
      ]);
    });

    it('refuses a PmtInfId with a zero-width space, naming it', async () => {
      const xml = (await example(uniqueId('PMTINF'))).replace('SALARIES-DEC', 'SALARIES\u200B-DEC');
      const reply = await submitXml(xml);
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams).toEqual([
        {
          name: '/Document/CstmrCdtTrfInitn/PmtInf[1]/PmtInfId',
          reason: expect.stringContaining('invisible or format characters'),
        },
      ]);
    });

    it('refuses an account id with a look-alike letter, in a pain.001 and in JSON', async () => {
      const xml = withoutSepa(await example(uniqueId('LOOKALIKE'))).replace(
        '001-DDA-01-123456',
        '001-DDА-01-123456',
      );
      const reply = await submitXml(xml);
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams[0]).toEqual({
        name: '/Document/CstmrCdtTrfInitn/PmtInf[1]/DbtrAcct/Id/Othr/Id',
        reason: expect.stringContaining('must not mix letters of different scripts'),
      });
      const json = await callApi(service.baseUrl, '/v1/payments/credit-transfers', {
        token: service.token,
        body: { paymentMethod: 'CreditTransfer', amount: '1.00', debtorAccountId: '００１-DDA-01' },
      });
      expect(json.status).toBe(400);
      expect(json.body.invalidParams).toEqual([
        { name: 'debtorAccountId', reason: expect.stringContaining('Unicode NFKC') },
      ]);
    });
  });

  describe('what XML allows', () => {
    it('takes a processing instruction inside a transaction, reading what follows it', async () => {
      const xml = (await example(uniqueId('PI'))).replace('<CdtrAcct>', '<?foo bar?><CdtrAcct>');
      const reply = await submitXml(xml);
      expect(reply.status, JSON.stringify(reply.body)).toBe(202);
      const status = await callApi(
        service.baseUrl,
        `/v1/payments/credit-transfers/${reply.body.creditTransfers[0].paymentId}/status`,
        { token: service.token },
      );
      expect(status.body.creditorAccountId).toBe('DE89370400440532013000');
    });

    it('compares NbOfTxs and CtrlSum as numbers: 03 and 6150.750000000 are right', async () => {
      const xml = (await example(uniqueId('NUMBERS')))
        .replace('<NbOfTxs>3</NbOfTxs>', '<NbOfTxs>03</NbOfTxs>')
        .replace('<CtrlSum>6150.75</CtrlSum>', '<CtrlSum>6150.750000000</CtrlSum>');
      const reply = await submitXml(xml);
      expect(reply.status, JSON.stringify(reply.body)).toBe(202);
      const wrong = await submitXml(
        (await example(uniqueId('NUMBERS-OFF'))).replace(
          '<CtrlSum>6150.75</CtrlSum>',
          '<CtrlSum>6150.750000001</CtrlSum>',
        ),
      );
      expect(wrong.status).toBe(400);
      expect(wrong.body.invalidParams).toEqual([
        {
          name: '/Document/CstmrCdtTrfInitn/GrpHdr/CtrlSum',
          reason: 'must be 6150.75, the sum of the InstdAmt it covers',
        },
      ]);
    });
  });

  describe('past execution dates', () => {
    /** The example with each group's ReqdExctnDt `days` from today. */
    const dated = async (messageId: string, salaries: number, suppliers: number) => {
      const xml = await example(messageId);
      const [head, rest] = xml.split('<PmtInfId>SUPPLIERS-DEC</PmtInfId>') as [string, string];
      return `${head.replaceAll(dayOffset(0), dayOffset(salaries))}<PmtInfId>SUPPLIERS-DEC</PmtInfId>${rest.replaceAll(dayOffset(0), dayOffset(suppliers))}`;
    };

    it('executes a group dated up to 30 days past at once, saying so; rejects an older group with DT01, once, and takes the rest', async () => {
      const reply = await submitXml(await dated(uniqueId('PAST'), -40, -10));
      expect(reply.status, JSON.stringify(reply.body)).toBe(202);
      expect(reply.body.count).toBe(1);
      expect(reply.body.rejectedPaymentGroups).toEqual([
        {
          paymentInformationId: 'SALARIES-DEC',
          statusReasonCode: 'DT01',
          statusReason: 'InvalidDate',
          reason: `ReqdExctnDt ${dayOffset(-40)} is more than 30 days past: the payment group was not executed`,
          transactions: 2,
        },
      ]);
      const paymentId = reply.body.creditTransfers[0].paymentId;
      const stored = await service.table.get({
        TableName: 'credit-transfers',
        Key: creditTransferKey('local', paymentId),
      });
      expect(JSON.parse(stored.Item?.transfer).valueDate).toBe(dayOffset(0));
      expect(stored.Item?.additionalInformation).toBe(
        `ReqdExctnDt ${dayOffset(-10)} is past: executed on receipt, ${dayOffset(0)}`,
      );
      const batch = await service.table.get({
        TableName: 'credit-transfers',
        Key: batchKey('local', reply.body.batchId),
      });
      expect(batch.Item?.message.groups).toEqual([
        {
          paymentInformationId: 'SALARIES-DEC',
          count: 0,
          rejection: {
            statusReasonCode: 'DT01',
            statusReason: 'InvalidDate',
            additionalInformation: `ReqdExctnDt ${dayOffset(-40)} is more than 30 days past: the payment group was not executed`,
            transactions: 2,
          },
        },
        // No BtchBookg in the file: batch booking, the service's agreement.
        { paymentInformationId: 'SUPPLIERS-DEC', count: 1, batchBooking: true },
      ]);
    });

    it('refuses a message whose every group is too old with one line per group, not per transaction', async () => {
      const reply = await submitXml(await dated(uniqueId('OLD'), -31, -45));
      expect(reply.status).toBe(400);
      expect(reply.body.invalidParams).toEqual([
        {
          name: '/Document/CstmrCdtTrfInitn/PmtInf[1]/ReqdExctnDt/Dt',
          reason: `ReqdExctnDt ${dayOffset(-31)} is more than 30 days past: the payment group was not executed`,
        },
        {
          name: '/Document/CstmrCdtTrfInitn/PmtInf[2]/ReqdExctnDt/Dt',
          reason: `ReqdExctnDt ${dayOffset(-45)} is more than 30 days past: the payment group was not executed`,
        },
      ]);
    });
  });
});
