import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreditTransfersClient } from '../../client/src/index.ts';
import { cliEnv, runCli } from '../client/cli-process.ts';
import { expectValidPain002 } from '../support/iso20022-schemas.ts';
import { callApi, createClient, LOCAL_CLIENT, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const BATCHES = '/v1/payments/credit-transfer-batches';
const TRANSFERS = '/v1/payments/credit-transfers';
const FINAL = new Set(['AcceptedSettlementCompleted', 'Rejected', 'Cancelled']);

// At INFO: the order of the answer and the lifecycle starts is read from the service's log.
const service = useLocalService({
  token: 'transactions:read transactions:write',
  env: { POWERTOOLS_LOG_LEVEL: 'INFO' },
});

const today = () => new Date().toISOString().slice(0, 10);

/** An example message with today's execution date and its own MsgId, so every test sends a new one. */
const example = async (version: '09' | '03', messageId: string) =>
  (await readFile(`examples/pain.001.001.${version}.xml`, 'utf8'))
    .replaceAll('2026-12-01', today())
    .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>${messageId}</MsgId>`);

const submitXml = (xml: string, headers: Record<string, string> = {}) =>
  callApi(service.baseUrl, BATCHES, {
    token: service.token,
    rawBody: xml,
    headers: { 'Content-Type': 'application/xml', ...headers },
  });

const getBatch = (batchId: string, headers: Record<string, string> = {}, token = service.token) =>
  callApi(service.baseUrl, `${BATCHES}/${batchId}`, { token, headers });

const statusOf = (paymentId: string) =>
  callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, { token: service.token });

/** A test message of this project's own (ISO's schema, beyond SEPA), dated today under its own MsgId. */
const isoMessage = async (version: '03' | '09', messageId: string) =>
  (await readFile(`test/fixtures/pain001/iso-${version}.xml`, 'utf8'))
    .replaceAll('2026-12-01', today())
    .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>${messageId}</MsgId>`);

const OTHER_TENANT = { clientId: 'batches-other-tenant', clientSecret: 'batches-other-secret-0123456789' };
let otherTenantClient: Promise<void> | undefined;
/** A token of a client of another tenant (made once). */
const otherTenantToken = async (scope = 'transactions:read transactions:write') => {
  otherTenantClient ??= createClient(service, {
    ...OTHER_TENANT,
    scope: 'transactions:read transactions:write',
    tenant: 'other',
  });
  await otherTenantClient;
  return requestToken(service.baseUrl, scope, OTHER_TENANT);
};

const singleReport = async (paymentId: string) => {
  const reply = await callApi(service.baseUrl, `${TRANSFERS}/${paymentId}/status`, {
    token: service.token,
    headers: { Accept: 'application/xml' },
  });
  expect(reply.status).toBe(200);
  await expectValidPain002(reply.body);
  return String(reply.body);
};

const untilAllFinal = async (batchId: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await getBatch(batchId);
    const statuses = (reply.body.creditTransfers as { status: string }[]).map((transfer) => transfer.status);
    if (statuses.every((status) => FINAL.has(status))) return reply.body;
    if (Date.now() > deadline) throw new Error(`batch ${batchId} still has ${statuses.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

const countStored = async () =>
  (
    await service.table.scan({
      TableName: 'credit-transfers',
      Select: 'COUNT',
      FilterExpression: 'begins_with(pk, :batch) OR begins_with(pk, :tenant)',
      ExpressionAttributeValues: { ':batch': 'BATCH', ':tenant': 'PAYMENT#local#' },
    })
  ).Count ?? 0;

describe('credit transfer batches (pain.001)', () => {
  it.each(['09', '03'] as const)(
    'takes a pain.001.001.%s with several payment groups: one transfer per CdtTrfTxInf, fields as in the message, pain.002 reports valid',
    async (version) => {
      const xml = await example(version, `IT-${version}-${Date.now()}`);
      const accepted = await submitXml(xml);
      expect(accepted.status).toBe(202);
      expect(accepted.body).toMatchObject({
        status: 'Accepted',
        count: 3,
        messageName: `pain.001.001.${version}`,
      });
      const paymentIds = (accepted.body.creditTransfers as { paymentId: string }[]).map(
        (item) => item.paymentId,
      );
      expect(new Set(paymentIds).size).toBe(3);

      const first = (await statusOf(paymentIds[0] as string)).body;
      if (version === '09') {
        expect(first).toMatchObject({
          paymentMethod: 'CreditTransfer',
          amount: '3150.25',
          currency: 'EUR',
          debtorAccountId: '001-DDA-01-123456',
          creditorAccountId: 'DE89370400440532013000',
          valueDate: today(),
          chargeBearerType: 'FollowingServiceLevel',
          paymentProcessing: { serviceLevel: 'SEPA', categoryPurpose: 'SALA' },
          paymentReason: 'SALA',
          purpose: 'Salary December 2026',
          identifiers: [
            { number: 'E2E-SAL-DEC-0001', schemeName: 'EndToEndId' },
            { number: 'SAL-DEC-0001', schemeName: 'InstrId' },
          ],
          creditor: { name: 'Ana Ruiz', postalAddress: { townName: 'Berlin', country: 'DE' } },
        });
        const third = (await statusOf(paymentIds[2] as string)).body;
        expect(third).toMatchObject({
          amount: '750.00',
          chargeBearerType: 'Shared',
          remittanceInformation: { remittanceNumber: 'RF18539007547034' },
        });
      } else {
        expect(first).toMatchObject({
          amount: '400.00',
          currency: 'EUR',
          debtorAccountId: 'DE02120300000000202051',
          creditorAccountId: 'DE89370400440532013000',
          purpose: 'Rechnung RE-2026-0815',
          debtor: { agent: { identifiers: [{ number: 'BYLADEM1001', schemeName: 'BIC' }] } },
        });
      }

      const batch = await untilAllFinal(accepted.body.batchId);
      expect(batch.creditTransfers.map((item: { paymentId: string }) => item.paymentId)).toEqual(paymentIds);
      if (version === '09') {
        expect(batch.creditTransfers[2]).toMatchObject({
          status: 'Rejected',
          statusReason: 'InsufficientFunds',
          statusReasonCode: 'AM04',
        });
      }

      const report = await getBatch(accepted.body.batchId, { Accept: 'application/xml' });
      expect(report.status).toBe(200);
      expect(report.headers.get('content-type')).toContain('application/xml');
      await expectValidPain002(report.body);
      expect(String(report.body).match(/<TxInfAndSts>/g)).toHaveLength(3);
      expect(report.body).toContain('<OrgnlEndToEndId>');

      const single = await callApi(service.baseUrl, `${TRANSFERS}/${paymentIds[0]}/status`, {
        token: service.token,
        headers: { Accept: 'application/xml' },
      });
      expect(single.headers.get('content-type')).toContain('application/xml');
      await expectValidPain002(single.body);
    },
  );

  it('answers the acceptance as a pain.002 group status report (ACCP) when asked for XML', async () => {
    const reply = await submitXml(await example('09', `IT-ACCP-${Date.now()}`), {
      Accept: 'application/xml',
    });
    expect(reply.status).toBe(202);
    await expectValidPain002(reply.body);
    expect(reply.body).toContain('<GrpSts>ACCP</GrpSts>');
  });

  it('replays the same message and makes nothing new; refuses another message under a used MsgId', async () => {
    const xml = await example('09', `IT-REPLAY-${Date.now()}`);
    const first = await submitXml(xml);
    expect(first.status).toBe(202);
    const stored = await countStored();
    const again = await submitXml(xml);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.creditTransfers).toEqual(first.body.creditTransfers);
    expect(await countStored()).toBe(stored);

    const other = await submitXml(
      xml.replace('3150.25', '3150.26').replace('6150.75', '6150.76').replace('5400.75', '5400.76'),
    );
    expect(other.status).toBe(422);
    expect(other.body.error).toBe('message_id_reused');
    expect(await countStored()).toBe(stored);
  });

  it.each(['03', '09'] as const)(
    'takes ISO’s pain.001.001.%s beyond SEPA (TRA, Othr ids, structured addresses, LclInstrm, CtgyPurp, USD, GBP, CHF, JPY); each transfer’s pain.002 names its original message',
    async (version) => {
      const messageId = `IT-ISO-${version}-${Date.now()}`;
      const accepted = await submitXml(await isoMessage(version, messageId));
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
      const paymentIds = (accepted.body.creditTransfers as { paymentId: string }[]).map(
        (item) => item.paymentId,
      );
      const [first, second] = await Promise.all(
        paymentIds.slice(0, 2).map(async (paymentId) => (await statusOf(paymentId)).body),
      );
      if (version === '03') {
        expect(paymentIds).toHaveLength(3);
        expect(first).toMatchObject({
          paymentMethod: 'CreditTransfer',
          amount: '10.5',
          currency: 'USD',
          debtorAccountId: '000123456789',
          creditorAccountId: '4456789012',
          valueDate: today(),
          chargeBearerType: 'BorneByDebtor',
          paymentProcessing: { localInstrument: 'CCD', categoryPurpose: 'SUPP', serviceLevel: 'NURG' },
          debtor: {
            postalAddress: { streetName: 'Pike Street', buildingNumber: '1200', townName: 'Seattle' },
          },
        });
        expect(second).toMatchObject({
          amount: '0.75',
          paymentProcessing: { localInstrument: 'SAME-DAY', categoryPurpose: 'OFFICE' },
        });
        const report = await singleReport(paymentIds[0] as string);
        expect(report).toContain(
          `<OrgnlMsgId>${messageId}</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.03</OrgnlMsgNmId><OrgnlCreDtTm>2026-11-30T08:15:00</OrgnlCreDtTm>`,
        );
        expect(report).toContain(
          '<OrgnlPmtInfId>NW-USD-TRA-01</OrgnlPmtInfId><TxInfAndSts><OrgnlInstrId>NW-INSTR-0001</OrgnlInstrId><OrgnlEndToEndId>NW-E2E-0001</OrgnlEndToEndId><TxSts>',
        );
        const third = await singleReport(paymentIds[2] as string);
        expect(third).toContain('<OrgnlPmtInfId>NW-GBP-TRF-01</OrgnlPmtInfId>');
        expect(third).toContain(
          '<OrgnlInstrId>NW-GBP-0001</OrgnlInstrId><OrgnlEndToEndId>NW-GBP-E2E-0001</OrgnlEndToEndId>',
        );
      } else {
        expect(paymentIds).toHaveLength(2);
        expect(first).toMatchObject({
          amount: '1.5',
          currency: 'CHF',
          debtorAccountId: 'CH-TREASURY-0001',
          paymentProcessing: {
            instructionPriority: 'HIGH',
            localInstrument: 'CH03',
            categoryPurpose: 'TREA',
          },
        });
        expect(second).toMatchObject({ amount: '150000', currency: 'JPY', creditorAccountId: '1234567' });
        const report = await singleReport(paymentIds[0] as string);
        expect(report).toContain(
          `<OrgnlMsgId>${messageId}</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.09</OrgnlMsgNmId>`,
        );
        expect(report).toContain(
          '<OrgnlPmtInfId>AI-CHF-01</OrgnlPmtInfId><TxInfAndSts><OrgnlInstrId>AI-INSTR-77</OrgnlInstrId>' +
            '<OrgnlEndToEndId>AI-E2E-77</OrgnlEndToEndId><OrgnlUETR>7a3f1c2e-9b4d-4e8a-a1f2-3c4d5e6f7a8b</OrgnlUETR>',
        );
      }
      const batch = await getBatch(accepted.body.batchId, { Accept: 'application/xml' });
      await expectValidPain002(batch.body);
      expect(batch.body).toContain(`<OrgnlMsgId>${messageId}</OrgnlMsgId>`);
    },
  );

  it('refuses a SEPA payment in another currency than euro, naming the SEPA profile; the same payment without SEPA is taken', async () => {
    const xml = (await example('09', `IT-SEPA-${Date.now()}`)).replaceAll(
      'Ccy="EUR">3150.25',
      'Ccy="USD">3150.25',
    );
    const refused = await submitXml(xml);
    expect(refused.status).toBe(400);
    expect(refused.body.invalidParams).toEqual([
      {
        name: '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/Amt/InstdAmt/@Ccy',
        reason: 'must be EUR under the SEPA profile (service level SEPA)',
      },
    ]);
    const taken = await submitXml(
      xml
        .replace('<Cd>SEPA</Cd>', '<Cd>NURG</Cd>')
        .replace(/<MsgId>[^<]*</, `<MsgId>IT-NOSEPA-${Date.now()}<`),
    );
    expect(taken.status, JSON.stringify(taken.body)).toBe(202);
  });

  it('says in the pain.002 of a transfer sent in a JSON batch that it came as JSON', async () => {
    const reply = await callApi(service.baseUrl, BATCHES, {
      token: service.token,
      body: {
        creditTransfers: [
          {
            paymentMethod: 'CreditTransfer',
            amount: '5.00',
            currency: 'EUR',
            debtorAccountId: '001-DDA-01-123456',
            identifiers: [{ number: 'JSON-E2E-1', schemeName: 'EndToEndId' }],
          },
        ],
      },
    });
    expect(reply.status).toBe(202);
    const report = await singleReport(reply.body.creditTransfers[0].paymentId);
    expect(report).toContain(
      `<OrgnlMsgId>${reply.body.messageId}</OrgnlMsgId><OrgnlMsgNmId>CreditTransferBatchJSON</OrgnlMsgNmId>`,
    );
    expect(report).toContain('<OrgnlEndToEndId>JSON-E2E-1</OrgnlEndToEndId>');
  });

  it('refuses another message under a used MsgId even under a new idempotency key', async () => {
    const xml = await example('09', `IT-REUSE-KEY-${Date.now()}`);
    expect((await submitXml(xml, { idempotencyId: `reuse-a-${Date.now()}` })).status).toBe(202);
    const stored = await countStored();
    const other = await submitXml(xml.replace('Salary December 2026', 'Salary December 2026 bis'), {
      idempotencyId: `reuse-b-${Date.now()}`,
    });
    expect(other.status).toBe(422);
    expect(other.body.error).toBe('message_id_reused');
    expect(await countStored()).toBe(stored);
  });

  it('keeps each tenant’s MsgIds its own: another tenant’s message under the same MsgId is a batch of its own', async () => {
    const xml = await example('09', `IT-TENANTS-${Date.now()}`);
    const mine = await submitXml(xml);
    expect(mine.status).toBe(202);
    const token = await otherTenantToken();
    const send = (body: string) =>
      callApi(service.baseUrl, BATCHES, {
        token,
        rawBody: body,
        headers: { 'Content-Type': 'application/xml' },
      });
    const theirs = await send(xml);
    expect(theirs.status).toBe(202);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.batchId).not.toBe(mine.body.batchId);
    const theirOther = await send(
      xml.replace('3150.25', '3150.26').replace('6150.75', '6150.76').replace('5400.75', '5400.76'),
    );
    expect(theirOther.status).toBe(422);
    const anotherMsgId = await send(
      (await example('09', `IT-TENANTS-B-${Date.now()}`)).replace('Salary December 2026', 'Salary'),
    );
    expect(anotherMsgId.status).toBe(202);
    const fresh = await example('09', `IT-TENANTS-C-${Date.now()}`);
    expect((await submitXml(fresh.replace('Salary December 2026', 'Bonus'))).status).toBe(202);
    expect((await send(fresh)).status).toBe(202);
  });

  it('refuses a JSON batch’s idempotency key reused with another body, or with other servicer headers; replays the same request', async () => {
    const key = `json-key-${Date.now()}`;
    const body = {
      creditTransfers: [
        {
          paymentMethod: 'CreditTransfer',
          amount: '7.00',
          currency: 'EUR',
          debtorAccountId: '001-DDA-01-123456',
        },
      ],
    };
    const send = (value: unknown, headers: Record<string, string> = {}) =>
      callApi(service.baseUrl, BATCHES, {
        token: service.token,
        body: value,
        headers: { idempotencyId: key, ...headers },
      });
    const first = await send(body, { servicerId: 'BRANCH-A' });
    expect(first.status).toBe(202);
    const stored = await countStored();
    const replay = await send(body, { servicerId: 'BRANCH-A' });
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.batchId).toBe(first.body.batchId);
    const otherBody = await send(
      { creditTransfers: [{ ...body.creditTransfers[0], amount: '7.01' }] },
      { servicerId: 'BRANCH-A' },
    );
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.error).toBe('idempotency_key_reused');
    const otherServicer = await send(body, { servicerId: 'BRANCH-B' });
    expect(otherServicer.status).toBe(422);
    expect(otherServicer.body.error).toBe('idempotency_key_reused');
    expect(await countStored()).toBe(stored);
  });

  it('refuses a message whose CtrlSum is off by one cent, naming the XML path, and stores nothing', async () => {
    const stored = await countStored();
    const reply = await submitXml(
      (await example('09', `IT-CTRL-${Date.now()}`)).replace(
        '<CtrlSum>750.00</CtrlSum>',
        '<CtrlSum>750.01</CtrlSum>',
      ),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.invalidParams).toEqual([
      {
        name: '/Document/CstmrCdtTrfInitn/PmtInf[2]/CtrlSum',
        reason: 'must be 750, the sum of the InstdAmt it covers',
      },
    ]);
    expect(await countStored()).toBe(stored);
  });

  it('refuses a message invalid against its schema, and one with a DTD, naming where', async () => {
    const xml = await example('09', `IT-XSD-${Date.now()}`);
    const invalid = await submitXml(xml.replace('<InstdAmt Ccy="EUR">750.00', '<InstdAmt Ccy="EUR">-750.00'));
    expect(invalid.status).toBe(400);
    expect(invalid.body.invalidParams[0].name).toBe(
      '/Document/CstmrCdtTrfInitn/PmtInf[2]/CdtTrfTxInf/Amt/InstdAmt',
    );
    const dtd = await submitXml(xml.replace('<Document', '<!DOCTYPE Document [<!ENTITY x "y">]>\n<Document'));
    expect(dtd.status).toBe(400);
  });

  it('takes a JSON batch, answers its transfers a hundred at a time, and hides it from another tenant', async () => {
    const creditTransfers = Array.from({ length: 120 }, (_, index) => ({
      paymentMethod: 'CreditTransfer',
      amount: `${index + 1}.00`,
      currency: 'EUR',
      debtorAccountId: '001-DDA-01-123456',
    }));
    const reply = await callApi(service.baseUrl, BATCHES, {
      token: service.token,
      body: { creditTransfers },
      headers: { idempotencyId: `json-batch-${Date.now()}` },
    });
    expect(reply.status).toBe(202);
    expect(reply.body.count).toBe(120);
    const page = await getBatch(reply.body.batchId);
    expect(page.body.creditTransfers).toHaveLength(100);
    expect(page.body.next).toBe('100');
    const rest = await callApi(service.baseUrl, `${BATCHES}/${reply.body.batchId}?cursor=100`, {
      token: service.token,
    });
    expect(rest.body.creditTransfers).toHaveLength(20);
    expect(rest.body.next).toBeUndefined();

    const otherToken = await otherTenantToken('transactions:read');
    expect((await getBatch(reply.body.batchId, {}, otherToken)).status).toBe(404);
  });

  it('refuses a JSON batch with one bad transfer, naming it, and stores nothing', async () => {
    const stored = await countStored();
    const reply = await callApi(service.baseUrl, BATCHES, {
      token: service.token,
      body: {
        creditTransfers: [
          { paymentMethod: 'CreditTransfer', amount: '1.00', currency: 'EUR', debtorAccountId: 'a-1' },
          { paymentMethod: 'CreditTransfer', amount: '1.001', currency: 'EUR', debtorAccountId: 'a-1' },
        ],
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.invalidParams[0].name).toBe('creditTransfers[1].amount');
    expect(await countStored()).toBe(stored);
  });

  it('refuses more than 2,000 transfers with 413 naming the limit', async () => {
    const creditTransfers = Array.from({ length: 2001 }, () => ({
      paymentMethod: 'CreditTransfer',
      amount: '1.00',
      debtorAccountId: 'a-1',
    }));
    const reply = await callApi(service.baseUrl, BATCHES, {
      token: service.token,
      body: { creditTransfers },
    });
    expect(reply.status).toBe(413);
    expect(reply.body.error_description).toContain('2000');
  });

  it('answers 202 before any lifecycle of the batch starts: they are started afterwards, once, by the batch lifecycle starter', async () => {
    const logLines = (): Record<string, unknown>[] =>
      service
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        });
    const earlier = logLines().length;
    const accepted = await submitXml(await example('09', `IT-ASYNC-${Date.now()}`));
    expect(accepted.status).toBe(202);
    const { batchId } = accepted.body;
    await untilAllFinal(batchId);

    // The process's log, in the order things happened: the answer, then the starts.
    const lines = logLines().slice(earlier);
    const answered = lines.findIndex(
      (line) => line.message === 'Request handled' && line.resource === BATCHES && line.statusCode === 202,
    );
    const starting = lines.findIndex(
      (line) => line.message === 'Starting the lifecycles of a batch' && line.batchId === batchId,
    );
    const started = lines.filter(
      (line) => line.message === 'Started the lifecycles of a batch' && line.batchId === batchId,
    );
    expect(answered).toBeGreaterThanOrEqual(0);
    expect(starting).toBeGreaterThan(answered);
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ tenant: 'local', started: 3, failed: 0 });
  });

  it('the SDK sends a pain.001 as bytes and reads the batch, typed', async () => {
    const client = new CreditTransfersClient({
      baseUrl: service.baseUrl,
      clientId: LOCAL_CLIENT.clientId,
      clientSecret: LOCAL_CLIENT.clientSecret,
    });
    const bytes = new TextEncoder().encode(await example('03', `IT-SDK-${Date.now()}`));
    const accepted = await client.submitBatch(bytes);
    expect(accepted).toMatchObject({ status: 'Accepted', count: 3, messageName: 'pain.001.001.03' });
    const page = await client.batch(accepted.batchId);
    expect(page.creditTransfers.map((item) => item.paymentId)).toEqual(
      accepted.creditTransfers.map((item) => item.paymentId),
    );
  });

  describe('the CLI', () => {
    let folder: string;
    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'cli-batch-'));
    });
    afterAll(async () => {
      if (folder) await rm(folder, { recursive: true, force: true });
    });

    it('batch submit sends a pain.001 file and, with --wait, prints the counts by final status and reason code', async () => {
      const path = join(folder, 'payroll.xml');
      await writeFile(path, await example('09', `IT-CLI-${Date.now()}`));
      const env = cliEnv(service.baseUrl, LOCAL_CLIENT);
      const result = await runCli(
        ['batch', 'submit', path, '--wait', '--timeout', '120s', '--format', 'json'],
        env,
      );
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout);
      expect(summary.count).toBe(3);
      // The example: two salaries settle, the supplier payment is refused for insufficient funds.
      expect(summary.statuses).toEqual([
        { status: 'AcceptedSettlementCompleted', count: 2 },
        { status: 'Rejected', statusReasonCode: 'AM04', statusReason: 'InsufficientFunds', count: 1 },
      ]);
      const batch = (await getBatch(summary.batchId)).body;
      expect(batch.messageName).toBe('pain.001.001.09');
    }, 180_000);

    it('batch submit sends a JSON file; the same file again is the same batch; --fail-unless-settled exits 4 on a rejection', async () => {
      const path = join(folder, 'batch.json');
      const account = `cli-${Date.now()}`;
      await writeFile(
        path,
        JSON.stringify({
          creditTransfers: [
            { paymentMethod: 'CreditTransfer', amount: '10.00', debtorAccountId: account },
            { paymentMethod: 'CreditTransfer', amount: '11.00', debtorAccountId: `${account}-closed` },
          ],
        }),
      );
      const env = cliEnv(service.baseUrl, LOCAL_CLIENT);
      const sent = await runCli(['batch', 'submit', path, '--format', 'json'], env);
      expect(sent.code, sent.stderr).toBe(0);
      const accepted = JSON.parse(sent.stdout);
      expect(accepted).toMatchObject({ status: 'Accepted', count: 2 });

      const waited = await runCli(
        ['batch', 'submit', path, '--wait', '--timeout', '120s', '--fail-unless-settled'],
        env,
      );
      expect(waited.code, waited.stderr).toBe(4);
      // Sent again, the same file is a replay of the same batch: nothing paid twice.
      expect(waited.stderr).toContain(`Batch ${accepted.batchId}: 2 transfers`);
      const rows = waited.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s{2,}/));
      expect(rows[0]).toEqual(['status', 'statusReasonCode', 'statusReason', 'count']);
      expect(rows.slice(1).sort()).toEqual(
        [
          ['AcceptedSettlementCompleted', '1'],
          ['Rejected', 'AC04', 'ClosedAccountNumber', '1'],
        ].sort(),
      );
    }, 180_000);
  });
});
