import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CreditTransfer } from '#domain/credit-transfers/credit-transfer';
import { pain002Document } from '#domain/iso20022/pain002';
import { JSON_MESSAGE_NAME, transferStatusReport } from '#domain/iso20022/transfer-report';
import { largePain001 } from '../../../scripts/bench/batch.ts';
import { expectValidIso20022, expectValidPain002, iso20022Faults } from '../../support/iso20022-schemas.ts';

/** Every pain.001 the project ships or tests with as valid, by path. */
const VALID_MESSAGES = [
  ...readdirSync('examples')
    .filter((file) => file.endsWith('.xml'))
    .map((file) => `examples/${file}`),
  ...readdirSync('test/fixtures/pain001').map((file) => `test/fixtures/pain001/${file}`),
];

/** Every XML example of the OpenAPI document, by where it is. */
const openApiXmlExamples = (): [string, string][] => {
  const found: [string, string][] = [];
  const walk = (value: unknown, path: string): void => {
    if (value === null || typeof value !== 'object') return;
    for (const [key, item] of Object.entries(value)) {
      if (key === 'application/xml' && typeof (item as { example?: unknown }).example === 'string')
        found.push([`${path}/${key}`, (item as { example: string }).example]);
      walk(item, `${path}/${key}`);
    }
  };
  walk(JSON.parse(readFileSync('openapi/openapi.json', 'utf8')), '');
  return found;
};

const transfer = (overrides: Partial<CreditTransfer> = {}): CreditTransfer =>
  ({
    paymentMethod: 'CreditTransfer',
    amount: '10.00',
    currency: 'EUR',
    debtorAccountId: 'acc-1',
    paymentId: '0b6a5e0e-7f0e-4a8b-9c1d-2e3f4a5b6c7d',
    status: 'AcceptedSettlementCompleted',
    date: '2026-12-01T10:00:00.000Z',
    ...overrides,
  }) as CreditTransfer;

describe('ISO 20022 messages against ISO’s schemas', () => {
  it.each(VALID_MESSAGES)('%s is valid against the schema of its namespace', async (path) => {
    await expectValidIso20022(readFileSync(path), /^pain\.001\.001\.0[39]$/);
  });

  it('finds the examples and the test messages of both versions', () => {
    const schemas = VALID_MESSAGES.map(
      (path) => readFileSync(path, 'utf8').match(/pain\.001\.001\.0\d/)?.[0],
    );
    expect(new Set(schemas)).toEqual(new Set(['pain.001.001.03', 'pain.001.001.09']));
  });

  it('every XML example of the OpenAPI document is valid against ISO’s schema of its namespace', async () => {
    const examples = openApiXmlExamples();
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const [where, xml] of examples) {
      const { schema, faults } = await iso20022Faults(xml);
      expect(faults, where).toEqual([]);
      expect(schema, where).toMatch(/^pain\.00[12]\.001\.\d\d$/);
    }
  });

  it('the benchmark’s generated pain.001 is valid against ISO’s schema', async () => {
    await expectValidIso20022(await largePain001(3, 'BENCH-VALIDITY'), 'pain.001.001.09');
  });

  it('the helper finds a fault: a message is not taken on the code under test’s word', async () => {
    const xml = readFileSync('examples/pain.001.001.09.xml', 'utf8').replace('<PmtMtd>TRF', '<PmtMtd>XXX');
    expect((await iso20022Faults(xml)).faults).not.toEqual([]);
  });
});

describe('the pain.002 of one transfer', () => {
  it('names the pain.001 a batched transfer came in: MsgId, message name, CreDtTm, PmtInfId, InstrId, EndToEndId, UETR', async () => {
    const xml = pain002Document(
      transferStatusReport(transfer(), {
        origin: {
          messageId: 'ISO-09-2026-12-0001',
          messageName: 'pain.001.001.09',
          createdAt: '2026-11-30T08:15:00+01:00',
          paymentInformationId: 'AI-CHF-01',
          instructionId: 'AI-INSTR-77',
          endToEndId: 'AI-E2E-77',
          uetr: '7a3f1c2e-9b4d-4e8a-a1f2-3c4d5e6f7a8b',
        },
      }),
    );
    await expectValidPain002(xml);
    expect(xml).toContain(
      '<OrgnlGrpInfAndSts><OrgnlMsgId>ISO-09-2026-12-0001</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.09</OrgnlMsgNmId>' +
        '<OrgnlCreDtTm>2026-11-30T08:15:00+01:00</OrgnlCreDtTm></OrgnlGrpInfAndSts>',
    );
    expect(xml).toContain(
      '<OrgnlPmtInfAndSts><OrgnlPmtInfId>AI-CHF-01</OrgnlPmtInfId><TxInfAndSts><OrgnlInstrId>AI-INSTR-77</OrgnlInstrId>' +
        '<OrgnlEndToEndId>AI-E2E-77</OrgnlEndToEndId><OrgnlUETR>7a3f1c2e-9b4d-4e8a-a1f2-3c4d5e6f7a8b</OrgnlUETR>' +
        '<TxSts>ACSC</TxSts>',
    );
  });

  it('says a transfer initiated alone as JSON came as JSON, with its own ids from its identifiers', async () => {
    const xml = pain002Document(
      transferStatusReport(
        transfer({
          identifiers: [
            { number: 'MY-INSTR', schemeName: 'InstrId' },
            { number: 'MY-E2E', schemeName: 'EndToEndId' },
          ],
        }),
      ),
    );
    await expectValidPain002(xml);
    expect(xml).toContain(
      `<OrgnlMsgId>0b6a5e0e7f0e4a8b9c1d2e3f4a5b6c7d</OrgnlMsgId><OrgnlMsgNmId>${JSON_MESSAGE_NAME}`,
    );
    expect(xml).toContain('<OrgnlInstrId>MY-INSTR</OrgnlInstrId><OrgnlEndToEndId>MY-E2E</OrgnlEndToEndId>');
  });

  it('reports Cancelled as CANC and Rejected as RJCT, each with its reason code', async () => {
    const cancelled = pain002Document(
      transferStatusReport(
        transfer({ status: 'Cancelled', statusReason: 'RequestedByCustomer', statusReasonCode: 'CUST' }),
      ),
    );
    await expectValidPain002(cancelled);
    expect(cancelled).toContain('<TxSts>CANC</TxSts><StsRsnInf><Rsn><Cd>CUST</Cd></Rsn>');
    const rejected = pain002Document(
      transferStatusReport(
        transfer({ status: 'Rejected', statusReason: 'InsufficientFunds', statusReasonCode: 'AM14' }),
      ),
    );
    await expectValidPain002(rejected);
    expect(rejected).toContain('<TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AM14</Cd></Rsn>');
  });

  it('says a past execution date was executed on receipt (AddtlInf), beside or without a reason', async () => {
    const note = 'ReqdExctnDt 2026-11-20 is past: executed on receipt, 2026-12-01';
    const settled = pain002Document(transferStatusReport(transfer(), { additionalInformation: note }));
    await expectValidPain002(settled);
    expect(settled).toContain(`<TxSts>ACSC</TxSts><StsRsnInf><AddtlInf>${note}</AddtlInf></StsRsnInf>`);
    const rejected = pain002Document(
      transferStatusReport(
        transfer({ status: 'Rejected', statusReason: 'InsufficientFunds', statusReasonCode: 'AM04' }),
        { additionalInformation: note },
      ),
    );
    await expectValidPain002(rejected);
    expect(rejected).toContain(
      `<StsRsnInf><Rsn><Cd>AM04</Cd></Rsn><AddtlInf>InsufficientFunds</AddtlInf><AddtlInf>${note}</AddtlInf></StsRsnInf>`,
    );
  });

  it('reports a payment group rejected whole as PmtInfSts RJCT with its reason, and no transactions', async () => {
    const xml = pain002Document({
      messageId: 'REPORT-1',
      createdAt: new Date('2026-12-01T09:00:00Z'),
      original: { messageId: 'MSG-1', messageName: 'pain.001.001.09', groupStatus: 'PART' },
      paymentGroups: [
        {
          paymentInformationId: 'OLD-GROUP',
          status: 'RJCT',
          rejection: {
            statusReasonCode: 'DT01',
            statusReason: 'InvalidDate',
            additionalInformation:
              'ReqdExctnDt 2026-09-01 is more than 30 days past: the payment group was not executed',
          },
          transactions: [],
        },
      ],
    });
    await expectValidPain002(xml);
    expect(xml).toContain(
      '<OrgnlPmtInfId>OLD-GROUP</OrgnlPmtInfId><PmtInfSts>RJCT</PmtInfSts><StsRsnInf><Rsn><Cd>DT01</Cd></Rsn><AddtlInf>InvalidDate</AddtlInf>',
    );
  });
});
