import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { XmlDocument, type XmlElement } from 'libxml2-wasm';
import { describe, expect, it } from 'vitest';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * pain.001 files written outside this project (test/fixtures/iso20022/SOURCES.md), each sent
 * unedited to the running service. What each should meet is written here by hand, with why: a
 * valid and consistent file is taken with transfers equal to its fields (checked against the file
 * read independently, with XPath); any other is refused naming its fault. Every file here dates
 * its execution more than 30 days in the past, for which the service rejects each payment group
 * (all of them: the message is refused); a file whose only fault that is, is then sent again with
 * its ReqdExctnDt alone moved to today.
 */
const SOURCES = 'test/fixtures/iso20022/SOURCES.md';
const CORPUS = resolve(process.env.ISO20022_CORPUS_DIR ?? '../shared/iso20022/pain001-corpus');
const BATCHES = '/v1/payments/credit-transfer-batches';
const NAMESPACE_REFUSAL = 'must be a Document in one of the namespaces';
/** Every group dated more than 30 days past: each is rejected, none left to take. */
const PAST_DATE =
  /^ReqdExctnDt \d{4}-\d{2}-\d{2} is more than 30 days past: the payment group was not executed$/;

type Expected =
  | { outcome: 'accepted'; why: string; tenant?: 'second' }
  | { outcome: 'refused'; why: string; faults: [name: string, reason: string | RegExp][] };

const EXPECTED: Record<string, Expected> = {
  'dutch-sepa-iso20022-abn-pain.001.001.03.xml': {
    outcome: 'accepted',
    why: 'ABN AMRO’s SEPA sample: valid, consistent',
  },
  'dutch-sepa-iso20022-ing-pain.001.001.03.xml': {
    outcome: 'accepted',
    why: 'ING’s SEPA sample: valid, consistent',
  },
  'moov-io-International_payment_RUB_naujas_1.xml': {
    outcome: 'accepted',
    why: 'an international payment in RUB',
  },
  'moov-io-International_payment_USD_naujas_1.xml': {
    outcome: 'accepted',
    why: 'an international payment in USD',
  },
  'moov-io-gistfile1.xml': {
    outcome: 'accepted',
    why: 'three payments in JPY, EUR and USD, Othr and IBAN accounts',
  },
  'moov-io-sepa_payment_naujas_1.xml': {
    outcome: 'accepted',
    why: 'a SEPA payment in euro, Latin characters',
  },
  'php-sepa-xml-pain.001.001.03.xml': { outcome: 'accepted', why: 'a SEPA payment' },
  'php-sepa-xml-pain.001.001.09.xml': {
    outcome: 'accepted',
    why: 'a SEPA payment in pain.001.001.09; its MsgId is the .03 file’s, so it goes to another tenant',
    tenant: 'second',
  },
  'sepa_king-pain.001.001.03.xml': { outcome: 'accepted', why: 'two SEPA payments' },
  'iso20022.js-example-swift_pain_001_v3.xml': { outcome: 'accepted', why: 'a cross-border payment in USD' },
  'moov-io-musterfile_pain.001_Nov2020.xml': {
    outcome: 'refused',
    why: 'the Swiss banks’ own namespace (pain.001.001.03.ch.02), not ISO’s',
    faults: [['/Document', NAMESPACE_REFUSAL]],
  },
  'php-sepa-xml-pain.001.003.03.xml': {
    outcome: 'refused',
    why: 'the German banks’ own namespace (pain.001.003.03), not ISO’s',
    faults: [['/Document', NAMESPACE_REFUSAL]],
  },
  'php-sepa-xml-79881ee-pain.001.001.09.xml': {
    outcome: 'refused',
    why: 'its group header counts 1 transaction of 10.1, but it holds 2 worth 30.3',
    faults: [
      ['/Document/CstmrCdtTrfInitn/GrpHdr/NbOfTxs', 'must be 2, the number of CdtTrfTxInf it covers'],
      ['/Document/CstmrCdtTrfInitn/GrpHdr/CtrlSum', 'must be 30.3, the sum of the InstdAmt it covers'],
    ],
  },
  'iso20022.js-cross_river-pain_001_ach_credit.xml': {
    outcome: 'refused',
    why: 'indented with no-break spaces (U+00A0), which are text where ISO’s schema allows only elements',
    faults: [['/Document', /Character content other than whitespace is not allowed/]],
  },
  'iso20022.js-cross_river-pain_001_rtp_credit.xml': {
    outcome: 'refused',
    why: 'indented with no-break spaces (U+00A0), as the ACH sample',
    faults: [['/Document', /Character content other than whitespace is not allowed/]],
  },
  'iso20022.js-example-sepa_pain_001_v3.xml': {
    outcome: 'refused',
    why: 'asks for SEPA, yet names its creditor “Dáel Muñiz”, outside SEPA’s Latin character set',
    faults: [
      ['/Document/CstmrCdtTrfInitn/PmtInf/CdtTrfTxInf/Cdtr/Nm', /Latin character set .* SEPA profile/],
    ],
  },
  'iso20022.js-example-sepa_pain_001_v3_multiple_pmtinf.xml': {
    outcome: 'refused',
    why: 'its group header counts 1 transaction of 10.00 over two PmtInf of 10.00 each; and the SEPA name as above',
    faults: [
      ['/Document/CstmrCdtTrfInitn/GrpHdr/NbOfTxs', 'must be 2, the number of CdtTrfTxInf it covers'],
      ['/Document/CstmrCdtTrfInitn/GrpHdr/CtrlSum', 'must be 20, the sum of the InstdAmt it covers'],
      ['/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf/Cdtr/Nm', /Latin character set/],
      ['/Document/CstmrCdtTrfInitn/PmtInf[2]/CdtTrfTxInf/Cdtr/Nm', /Latin character set/],
    ],
  },
  'iso20022.js-goldman_sachs-pain_001_ach_credit.xml': {
    outcome: 'refused',
    why: 'a template: its execution date is the text YYYY-MM-DD',
    faults: [['/Document/CstmrCdtTrfInitn/PmtInf/ReqdExctnDt', /'YYYY-MM-DD' is not a valid value/]],
  },
  'iso20022.js-goldman_sachs-pain_001_v3_sepa.xml': {
    outcome: 'refused',
    why: 'a template: YYYY-MM-DD for a date, the word IBAN for an IBAN',
    faults: [
      ['/Document/CstmrCdtTrfInitn/PmtInf/ReqdExctnDt', /'YYYY-MM-DD' is not a valid value/],
      ['/Document/CstmrCdtTrfInitn/PmtInf/DbtrAcct/Id/IBAN', /The value 'IBAN' is not accepted/],
    ],
  },
};

/** The table of SOURCES.md: each file with its SHA-256. */
const listed = (): [string, string][] =>
  [
    ...readFileSync(SOURCES, 'utf8').matchAll(
      /^\| `([^`]+\.xml)` \| `[^`]+` \| `[0-9a-f]{40}` \| `[^`]+` \| `([0-9a-f]{64})` \|/gm,
    ),
  ].map(([, file, sha256]) => [file as string, sha256 as string]);

const today = () => new Date().toISOString().slice(0, 10);

/** The file with its requested execution date(s) alone moved to today. */
const datedToday = (bytes: Buffer): string =>
  bytes.toString('utf8').replace(/(<ReqdExctnDt>\s*(?:<Dt>)?)\d{4}-\d{2}-\d{2}/g, `$1${today()}`);

interface FileTransaction {
  amount: string;
  currency: string;
  endToEndId: string;
  debtorAccountId: string;
  creditorAccountId: string | undefined;
  creditorName: string | undefined;
}

/** Each CdtTrfTxInf as the file says it, read with XPath: independent of the service's reader. */
const transactionsOf = (bytes: Buffer): FileTransaction[] => {
  const document = XmlDocument.fromBuffer(bytes);
  try {
    const ns = { p: document.root.namespaceUri };
    const text = (node: XmlElement, path: string) => node.get(path, ns)?.content.trim();
    const account = (node: XmlElement, path: string) =>
      text(node, `${path}/p:Id/p:IBAN`) ?? text(node, `${path}/p:Id/p:Othr/p:Id`);
    return (document.find('//p:CdtTrfTxInf', ns) as XmlElement[]).map((transaction) => {
      const group = transaction.parent as XmlElement;
      const amount = transaction.get('p:Amt/p:InstdAmt', ns) as XmlElement;
      return {
        amount: amount.content.trim(),
        currency: amount.attr('Ccy')?.value as string,
        endToEndId: text(transaction, 'p:PmtId/p:EndToEndId') as string,
        debtorAccountId: account(group, 'p:DbtrAcct') as string,
        creditorAccountId: account(transaction, 'p:CdtrAcct'),
        creditorName: text(transaction, 'p:Cdtr/p:Nm'),
      };
    });
  } finally {
    document.dispose();
  }
};

const present = existsSync(CORPUS);
if (!present) console.warn(`The pain.001 corpus is not at ${CORPUS}: its tests are skipped`);

describe.skipIf(!present)('pain.001 files written outside this project', () => {
  const service = useLocalService({ token: 'transactions:read transactions:write' });
  const SECOND = { clientId: 'corpus-second-tenant', clientSecret: 'corpus-second-secret-0123456789' };
  let second: Promise<string> | undefined;
  const tokenOf = (tenant: 'second' | undefined): Promise<string> => {
    if (tenant === undefined) return Promise.resolve(service.token);
    second ??= createClient(service, {
      ...SECOND,
      scope: 'transactions:read transactions:write',
      tenant: 'corpus-second',
    }).then(() => requestToken(service.baseUrl, 'transactions:read transactions:write', SECOND));
    return second;
  };
  const submit = async (body: Buffer | string, token: string) => {
    const response = await fetch(`${service.baseUrl}${BATCHES}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/xml' },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('holds every file SOURCES.md lists, unedited, each with an outcome decided by hand; at least 12, both versions', () => {
    const files = listed();
    expect(files.map(([file]) => file).sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(files.length).toBeGreaterThanOrEqual(12);
    for (const [file, sha256] of files)
      expect(
        createHash('sha256')
          .update(readFileSync(resolve(CORPUS, file)))
          .digest('hex'),
        file,
      ).toBe(sha256);
    const versions = files.map(
      ([file]) => readFileSync(resolve(CORPUS, file), 'utf8').match(/pain\.001\.00\d\.\d\d/)?.[0],
    );
    expect(versions).toContain('pain.001.001.03');
    expect(versions).toContain('pain.001.001.09');
  });

  it.each(Object.entries(EXPECTED))('%s', async (file, expected) => {
    const bytes = readFileSync(resolve(CORPUS, file));
    const token = await tokenOf(expected.outcome === 'accepted' ? expected.tenant : undefined);
    const asSent = await submit(bytes, token);
    expect(asSent.status, expected.why).toBe(400);
    const faults = asSent.body.invalidParams as { name: string; reason: string }[];
    if (expected.outcome === 'refused') {
      expect(faults.length, JSON.stringify(faults)).toBeGreaterThanOrEqual(expected.faults.length);
      for (const [index, [name, reason]] of expected.faults.entries()) {
        expect(faults[index]?.name, expected.why).toBe(name);
        if (typeof reason === 'string') expect(faults[index]?.reason, expected.why).toContain(reason);
        else expect(faults[index]?.reason, expected.why).toMatch(reason);
      }
      return;
    }
    // Valid and consistent, but dated in the past: refused for that alone, naming each ReqdExctnDt.
    expect(faults.length).toBeGreaterThan(0);
    for (const fault of faults) {
      expect(fault.name, JSON.stringify(fault)).toMatch(/\/ReqdExctnDt(\/Dt)?$/);
      expect(fault.reason).toMatch(PAST_DATE);
    }

    const accepted = await submit(datedToday(bytes), token);
    expect(accepted.status, `${expected.why}: ${JSON.stringify(accepted.body)}`).toBe(202);
    const fileTransactions = transactionsOf(bytes);
    const paymentIds = (accepted.body.creditTransfers as { paymentId: string }[]).map(
      (item) => item.paymentId,
    );
    expect(paymentIds).toHaveLength(fileTransactions.length);
    for (const [index, paymentId] of paymentIds.entries()) {
      const stored = (
        await callApi(service.baseUrl, `/v1/payments/credit-transfers/${paymentId}/status`, { token })
      ).body;
      const own = fileTransactions[index] as FileTransaction;
      expect(stored).toMatchObject({
        amount: own.amount,
        currency: own.currency,
        debtorAccountId: own.debtorAccountId,
        valueDate: today(),
        ...(own.creditorAccountId !== undefined && { creditorAccountId: own.creditorAccountId }),
        ...(own.creditorName !== undefined && { creditor: { name: own.creditorName } }),
      });
      expect(stored.identifiers).toContainEqual({ number: own.endToEndId, schemeName: 'EndToEndId' });
    }
  });
});
