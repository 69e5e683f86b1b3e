import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkedSchemaText,
  pain001Reader,
  SCHEMA_SHA256,
  SchemaDamagedError,
  type SchemaName,
} from '#adapters/iso20022/xml-schemas';
import { InvalidRequestError } from '#domain/commons/errors';
import { CHARGE_BEARERS, readPain001 } from '#domain/iso20022/pain001';
import { pain002Document } from '#domain/iso20022/pain002';
import { groupRuleViolations } from '#domain/iso20022/submit-batch';
import { expectValidPain002 } from '../../support/iso20022-schemas.ts';

const EXAMPLE = readFileSync('examples/pain.001.001.09.xml', 'utf8');
const ISO_03 = readFileSync('test/fixtures/pain001/iso-03.xml', 'utf8');
const ISO_09 = readFileSync('test/fixtures/pain001/iso-09.xml', 'utf8');

const read = async (xml: string) => {
  const { version, root } = await pain001Reader.read(xml);
  return readPain001(version, root);
};

const refusal = async (xml: string) => {
  try {
    await pain001Reader.read(xml);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return (error as InvalidRequestError).invalidParams;
  }
  throw new Error('the message was taken');
};

describe('pain.001 reading', () => {
  it("reads each group's BtchBookg in both of xs:boolean's spellings, and absent as absent", async () => {
    const [first, second] = ['<BtchBookg>1</BtchBookg>', '<BtchBookg>false</BtchBookg>'];
    const parts = EXAMPLE.split('<PmtMtd>TRF</PmtMtd>');
    expect(parts).toHaveLength(3);
    const both = `${parts[0]}<PmtMtd>TRF</PmtMtd>${first}${parts[1]}<PmtMtd>TRF</PmtMtd>${second}${parts[2]}`;
    expect((await read(both)).groups.map((group) => group.batchBooking)).toEqual([true, false]);
    const zero = both
      .replace(first, '<BtchBookg>0</BtchBookg>')
      .replace(second, '<BtchBookg>true</BtchBookg>');
    expect((await read(zero)).groups.map((group) => group.batchBooking)).toEqual([false, true]);
    expect((await read(EXAMPLE)).groups.map((group) => group.batchBooking)).toEqual([undefined, undefined]);
  });

  it('maps each element to its transfer field, with the XML path of each', async () => {
    const message = await read(EXAMPLE);
    expect(message.groups.map((group) => group.paymentInformationId)).toEqual([
      'SALARIES-DEC',
      'SUPPLIERS-DEC',
    ]);
    const [first] = message.groups[0]?.transactions ?? [];
    expect(first?.transfer).toMatchObject({
      paymentMethod: 'CreditTransfer',
      amount: '3150.25',
      currency: 'EUR',
      debtorAccountId: '001-DDA-01-123456',
      creditorAccountId: 'DE89370400440532013000',
      valueDate: '2026-12-01',
      chargeBearerType: 'FollowingServiceLevel',
      paymentProcessing: { serviceLevel: 'SEPA', categoryPurpose: 'SALA' },
      paymentReason: 'SALA',
      purpose: 'Salary December 2026',
      debtor: {
        name: 'Example Manufacturing Ltd',
        postalAddress: {
          streetName: 'Harbour Road',
          buildingNumber: '12',
          postCode: '1011',
          townName: 'Amsterdam',
          country: 'NL',
        },
        account: { accountNumber: '001-DDA-01-123456', currency: 'EUR' },
        agent: { identifiers: [{ number: 'EXMPNL2A', schemeName: 'BIC' }] },
      },
      creditor: { name: 'Ana Ruiz', agent: { identifiers: [{ number: 'BANKDEFFXXX', schemeName: 'BIC' }] } },
    });
    expect(first?.sources.currency).toBe(
      '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/Amt/InstdAmt/@Ccy',
    );
    const supplier = message.groups[1]?.transactions[0];
    expect(supplier?.transfer).toMatchObject({
      chargeBearerType: 'Shared',
      remittanceInformation: { remittanceNumber: 'RF18539007547034' },
    });
  });

  it('maps every charge bearer code', () => {
    expect(CHARGE_BEARERS).toEqual({
      DEBT: 'BorneByDebtor',
      CRED: 'BorneByCreditor',
      SHAR: 'Shared',
      SLEV: 'FollowingServiceLevel',
    });
  });

  it('finds the example messages without fault', async () => {
    expect(groupRuleViolations(await read(EXAMPLE))).toEqual([]);
    expect(groupRuleViolations(await read(readFileSync('examples/pain.001.001.03.xml', 'utf8')))).toEqual([]);
  });

  it.each([
    ['leading zeros in NbOfTxs', '<NbOfTxs>3</NbOfTxs>', '<NbOfTxs>003</NbOfTxs>'],
    ['trailing zeros in CtrlSum', '<CtrlSum>6150.75</CtrlSum>', '<CtrlSum>6150.750000000</CtrlSum>'],
    ['a plus sign in CtrlSum', '<CtrlSum>750.00</CtrlSum>', '<CtrlSum>+750</CtrlSum>'],
  ])('compares counts and sums as numbers, exactly: %s is right', async (_name, from, to) => {
    expect(groupRuleViolations(await read(EXAMPLE.replace(from, to)))).toEqual([]);
  });

  it('tells a CtrlSum off in its ninth decimal', async () => {
    expect(
      groupRuleViolations(
        await read(EXAMPLE.replace('<CtrlSum>750.00</CtrlSum>', '<CtrlSum>750.000000001</CtrlSum>')),
      ),
    ).toEqual([
      {
        name: '/Document/CstmrCdtTrfInitn/PmtInf[2]/CtrlSum',
        reason: 'must be 750, the sum of the InstdAmt it covers',
      },
    ]);
  });

  it.each([
    [
      'GrpHdr NbOfTxs',
      '<NbOfTxs>3</NbOfTxs>',
      '<NbOfTxs>4</NbOfTxs>',
      '/Document/CstmrCdtTrfInitn/GrpHdr/NbOfTxs',
    ],
    [
      'GrpHdr CtrlSum',
      '<CtrlSum>6150.75</CtrlSum>',
      '<CtrlSum>6150.74</CtrlSum>',
      '/Document/CstmrCdtTrfInitn/GrpHdr/CtrlSum',
    ],
    [
      'PmtInf NbOfTxs',
      '<NbOfTxs>2</NbOfTxs>',
      '<NbOfTxs>1</NbOfTxs>',
      '/Document/CstmrCdtTrfInitn/PmtInf[1]/NbOfTxs',
    ],
    [
      'PmtInf CtrlSum',
      '<CtrlSum>750.00</CtrlSum>',
      '<CtrlSum>750.01</CtrlSum>',
      '/Document/CstmrCdtTrfInitn/PmtInf[2]/CtrlSum',
    ],
  ])('refuses a wrong %s, naming its path', async (_, from, to, path) => {
    const violations = groupRuleViolations(await read(EXAMPLE.replace(from, to)));
    expect(violations.map((violation) => violation.name)).toEqual([path]);
  });

  it('reads ISO’s pain.001.001.03 beyond SEPA: TRA, other account ids, structured addresses, LclInstrm, CtgyPurp, USD and GBP', async () => {
    const message = await read(ISO_03);
    expect(groupRuleViolations(message)).toEqual([]);
    const [first, second] = message.groups[0]?.transactions ?? [];
    expect(first?.transfer).toEqual({
      paymentMethod: 'CreditTransfer',
      amount: '10.5',
      currency: 'USD',
      debtorAccountId: '000123456789',
      creditorAccountId: '4456789012',
      valueDate: '2026-12-01',
      chargeBearerType: 'BorneByDebtor',
      paymentProcessing: {
        instructionPriority: 'NORM',
        serviceLevel: 'NURG',
        localInstrument: 'CCD',
        categoryPurpose: 'SUPP',
      },
      paymentReason: 'SUPP',
      purpose: 'Invoice 2026-778',
      identifiers: [
        { number: 'NW-E2E-0001', schemeName: 'EndToEndId' },
        { number: 'NW-INSTR-0001', schemeName: 'InstrId' },
      ],
      debtor: {
        name: 'Northwind Traders Inc.',
        postalAddress: {
          addressType: 'BIZZ',
          streetName: 'Pike Street',
          buildingNumber: '1200',
          postCode: '98101',
          townName: 'Seattle',
          countrySubDivision: 'WA',
          country: 'US',
        },
        account: { accountNumber: '000123456789', currency: 'USD' },
        agent: {
          identifiers: [{ number: 'CHASUS33', schemeName: 'BIC' }],
          clearingSystemMemberIdentification: '021000021',
        },
      },
      creditor: {
        name: 'Contoso Office Supply',
        postalAddress: {
          streetName: 'Main Street',
          buildingNumber: '45',
          postCode: '10001',
          townName: 'New York',
          countrySubDivision: 'NY',
          country: 'US',
        },
        account: { accountNumber: '4456789012' },
        agent: { clearingSystemMemberIdentification: '026009593', name: 'Bank of America' },
      },
    });
    expect(first?.identification).toEqual({ instructionId: 'NW-INSTR-0001', endToEndId: 'NW-E2E-0001' });
    // The transaction's own PmtTpInf overrides its group's, field by field (Prtry as well as Cd).
    expect(second?.transfer).toMatchObject({
      amount: '0.75',
      paymentProcessing: {
        instructionPriority: 'NORM',
        serviceLevel: 'NURG',
        localInstrument: 'SAME-DAY',
        categoryPurpose: 'OFFICE',
      },
      creditor: {
        postalAddress: { country: 'US', addressLine: ['77 Market Street', 'San Francisco CA 94105'] },
      },
    });
    expect(message.groups[1]?.transactions[0]?.transfer).toMatchObject({
      paymentMethod: 'CreditTransfer',
      amount: '1250.00',
      currency: 'GBP',
      chargeBearerType: 'Shared',
      debtorAccountId: 'GB33BUKB20201555555555',
      remittanceInformation: { remittanceNumber: 'RF712348231' },
    });
  });

  it('reads ISO’s pain.001.001.09: UETR, BICFI, the address’s every element, CHF and JPY', async () => {
    const message = await read(ISO_09);
    expect(groupRuleViolations(message)).toEqual([]);
    const [first] = message.groups[0]?.transactions ?? [];
    expect(first?.transfer).toMatchObject({
      paymentMethod: 'CreditTransfer',
      amount: '1.5',
      currency: 'CHF',
      debtorAccountId: 'CH-TREASURY-0001',
      chargeBearerType: 'BorneByCreditor',
      paymentProcessing: { instructionPriority: 'HIGH', localInstrument: 'CH03', categoryPurpose: 'TREA' },
      identifiers: [
        { number: 'AI-E2E-77', schemeName: 'EndToEndId' },
        { number: 'AI-INSTR-77', schemeName: 'InstrId' },
        { number: '7a3f1c2e-9b4d-4e8a-a1f2-3c4d5e6f7a8b', schemeName: 'UETR' },
      ],
      debtor: {
        postalAddress: {
          department: 'Treasury',
          buildingName: 'Seehaus',
          floor: '4',
          room: '412',
          townLocationName: 'Altstadt',
          districtName: 'Kreis 1',
        },
        agent: { identifiers: [{ number: 'UBSWCHZH80A', schemeName: 'BIC' }] },
      },
    });
    expect(first?.identification).toEqual({
      instructionId: 'AI-INSTR-77',
      endToEndId: 'AI-E2E-77',
      uetr: '7a3f1c2e-9b4d-4e8a-a1f2-3c4d5e6f7a8b',
    });
    expect(message.groups[1]?.transactions[0]?.transfer).toMatchObject({ amount: '150000', currency: 'JPY' });
  });

  it('adds fractional amounts exactly for CtrlSum: 10.5 + 0.75 is 11.25', async () => {
    expect(groupRuleViolations(await read(ISO_03))).toEqual([]);
    const off = ISO_03.replace('<CtrlSum>11.25</CtrlSum>', '<CtrlSum>11.3</CtrlSum>');
    expect(groupRuleViolations(await read(off))).toEqual([
      {
        name: '/Document/CstmrCdtTrfInitn/PmtInf[1]/CtrlSum',
        reason: 'must be 11.25, the sum of the InstdAmt it covers',
      },
    ]);
  });

  describe('the SEPA profile (service level SEPA only)', () => {
    const SEPA_AMOUNT = '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/Amt/InstdAmt';
    it('refuses another currency than EUR, naming the profile', async () => {
      const xml = EXAMPLE.replace('<InstdAmt Ccy="EUR">3150.25', '<InstdAmt Ccy="USD">3150.25');
      expect(groupRuleViolations(await read(xml))).toEqual([
        { name: `${SEPA_AMOUNT}/@Ccy`, reason: 'must be EUR under the SEPA profile (service level SEPA)' },
      ]);
    });

    it('refuses a charge bearer other than SLEV', async () => {
      const xml = EXAMPLE.replace('<ChrgBr>SLEV</ChrgBr>', '<ChrgBr>SHAR</ChrgBr>');
      const violations = groupRuleViolations(await read(xml));
      expect(violations).toHaveLength(2);
      expect(violations[0]).toEqual({
        name: '/Document/CstmrCdtTrfInitn/PmtInf[1]/ChrgBr',
        reason: 'must be SLEV under the SEPA profile (service level SEPA)',
      });
    });

    it('refuses characters outside the Latin character set, and only under SEPA', async () => {
      const sepa = EXAMPLE.replace('<Nm>Ana Ruiz</Nm>', '<Nm>Ana Ruíz &amp; Co</Nm>');
      const violations = groupRuleViolations(await read(sepa));
      expect(violations.map((violation) => violation.name)).toEqual([
        '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/Cdtr/Nm',
      ]);
      expect(violations[0]?.reason).toContain('Latin character set');
      expect(violations[0]?.reason).toContain('SEPA profile');
      const elsewhere = ISO_03.replace('<Nm>Tailspin Toys Ltd</Nm>', '<Nm>Tailspin Toys &amp; Söhne</Nm>');
      expect(groupRuleViolations(await read(elsewhere))).toEqual([]);
    });

    it('takes any currency and charge bearer without the SEPA service level', async () => {
      const xml = EXAMPLE.replace('<Cd>SEPA</Cd>', '<Cd>NURG</Cd>')
        .replace('<ChrgBr>SLEV</ChrgBr>', '<ChrgBr>SHAR</ChrgBr>')
        .replace('<InstdAmt Ccy="EUR">3150.25', '<InstdAmt Ccy="USD">3150.25');
      expect(groupRuleViolations(await read(xml))).toEqual([]);
    });
  });

  it('refuses an amount given as EqvtAmt rather than dropping it', async () => {
    const xml = EXAMPLE.replace(
      '<InstdAmt Ccy="EUR">750.00</InstdAmt>',
      '<EqvtAmt><Amt Ccy="EUR">750.00</Amt><CcyOfTrf>USD</CcyOfTrf></EqvtAmt>',
    );
    const names = groupRuleViolations(await read(xml)).map((violation) => violation.name);
    expect(names).toContain('/Document/CstmrCdtTrfInitn/PmtInf[2]/CdtTrfTxInf/Amt/EqvtAmt');
  });

  it('names the XML path of a schema fault', async () => {
    const params = await refusal(EXAMPLE.replace('<Nm>Tom Jansen</Nm>', '<Nm>Tom Jansen</Nm><Unknown/>'));
    expect(params[0]?.name).toBe('/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[2]/Cdtr/Unknown');
  });

  it('refuses an external entity (XXE) without reading it', async () => {
    const xml = EXAMPLE.replace(
      '<Document',
      '<!DOCTYPE Document [<!ENTITY secret SYSTEM "file:///etc/passwd">]>\n<Document',
    ).replace('Ana Ruiz', '&secret;');
    expect(await refusal(xml)).toEqual([{ name: '(body)', reason: 'must not declare a DTD or entities' }]);
  });

  it('refuses entity expansion (a billion laughs)', async () => {
    const laughs = Array.from({ length: 9 }, (_, index) =>
      index === 0 ? '<!ENTITY l0 "lol">' : `<!ENTITY l${index} "${`&l${index - 1};`.repeat(10)}">`,
    ).join('');
    const xml = EXAMPLE.replace('<Document', `<!DOCTYPE Document [${laughs}]>\n<Document`).replace(
      'Ana Ruiz',
      '&l8;',
    );
    expect(await refusal(xml)).toEqual([{ name: '(body)', reason: 'must not declare a DTD or entities' }]);
  });

  it('refuses a message of another namespace', async () => {
    const params = await refusal(EXAMPLE.replaceAll('pain.001.001.09', 'pain.001.001.05'));
    expect(params[0]?.name).toBe('/Document');
  });
});

describe('pain.002 writing', () => {
  it('writes a report valid against the pain.002.001.10 schema, escaping text', async () => {
    const xml = pain002Document({
      messageId: 'report-1',
      createdAt: new Date('2026-11-26T10:00:00Z'),
      original: {
        messageId: 'A&B <1>',
        messageName: 'pain.001.001.09',
        numberOfTransactions: 1,
        groupStatus: 'ACCP',
      },
      paymentGroups: [
        {
          paymentInformationId: 'P1',
          transactions: [
            {
              endToEndId: 'E2E',
              status: 'Rejected',
              statusReason: 'InsufficientFunds',
              date: '2026-11-26T10:00:01.000Z',
            },
          ],
        },
      ],
    });
    await expectValidPain002(xml);
    expect(xml).toContain('<OrgnlMsgId>A&amp;B &lt;1&gt;</OrgnlMsgId>');
    expect(xml).toContain('<TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AM04</Cd></Rsn>');
  });
});

describe('XML schemas', () => {
  const XSD = 'lambdas/adapters/iso20022/xsd';

  it('keeps each schema byte for byte as its source lists it, and checks the same digests at load', () => {
    const sources = readFileSync(`${XSD}/SOURCES.md`, 'utf8');
    const rows = [...sources.matchAll(/^\| `([^`]+\.xsd)` \| `([0-9a-f]{64})` \|/gm)];
    expect(rows.map(([, file]) => file)).toEqual([
      'pain.001.001.03.xsd',
      'pain.001.001.09.xsd',
      'pain.002.001.10.xsd',
      'camt.054.001.08.xsd',
    ]);
    for (const [, file, sha256] of rows) {
      const digest = createHash('sha256')
        .update(readFileSync(`${XSD}/${file}`))
        .digest('hex');
      expect(digest, file).toBe(sha256);
      const name = (file as string).replace(/\.xsd$/, '');
      if (name in SCHEMA_SHA256) expect(SCHEMA_SHA256[name as SchemaName], file).toBe(sha256);
    }
  });

  it('refuses a damaged schema file loudly: one byte changed, or its CRLF line ends converted', () => {
    const bytes = readFileSync(`${XSD}/pain.001.001.03.xsd`);
    expect(checkedSchemaText('pain.001.001.03', bytes)).toContain('pain.001.001.03');
    const lineFeeds = Buffer.from(bytes.toString('latin1').replaceAll('\r\n', '\n'), 'latin1');
    expect(() => checkedSchemaText('pain.001.001.03', lineFeeds)).toThrow(SchemaDamagedError);
    const changed = Buffer.from(bytes);
    changed[changed.length - 3] = 0x20;
    expect(() => checkedSchemaText('pain.001.001.03', changed)).toThrow(
      /pain\.001\.001\.03\.xsd has SHA-256/,
    );
  });

  it('is ISO’s own pain.001.001.03, not a SEPA profile: structured addresses, other ids, TRA, any currency', () => {
    const xsd = readFileSync(`${XSD}/pain.001.001.03.xsd`, 'utf8');
    expect(xsd).toContain('<xs:element maxOccurs="1" minOccurs="0" name="StrtNm" type="Max70Text"/>');
    expect(xsd).toContain('<xs:enumeration value="TRA"/>');
    expect(xsd).toContain('<xs:simpleType name="ActiveOrHistoricCurrencyCode">');
  });
});
