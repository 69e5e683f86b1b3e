import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pain001Reader, validatePain002 } from '#adapters/iso20022/xml-schemas';
import { InvalidRequestError } from '#domain/commons/errors';
import { CHARGE_BEARERS, readPain001 } from '#domain/iso20022/pain001';
import { pain002Document } from '#domain/iso20022/pain002';
import { groupRuleViolations } from '#domain/iso20022/submit-batch';

const EXAMPLE = readFileSync('examples/pain.001.001.09.xml', 'utf8');

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
    await validatePain002(xml);
    expect(xml).toContain('<OrgnlMsgId>A&amp;B &lt;1&gt;</OrgnlMsgId>');
    expect(xml).toContain('<TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AM04</Cd></Rsn>');
  });
});

describe('XML schemas', () => {
  it('keeps each schema byte for byte as its source lists it', () => {
    const sources = readFileSync('lambdas/adapters/iso20022/xsd/SOURCES.md', 'utf8');
    const rows = [...sources.matchAll(/^\| `([^`]+\.xsd)` \| `([0-9a-f]{64})` \|/gm)];
    expect(rows).toHaveLength(3);
    for (const [, file, sha256] of rows) {
      const digest = createHash('sha256')
        .update(readFileSync(`lambdas/adapters/iso20022/xsd/${file}`))
        .digest('hex');
      expect(digest, file).toBe(sha256);
    }
  });
});
