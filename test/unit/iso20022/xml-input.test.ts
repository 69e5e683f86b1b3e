import { describe, expect, it } from 'vitest';
import { pain001Reader } from '#adapters/iso20022/xml-schemas';
import { BatchTooLargeError, InvalidRequestError } from '#domain/commons/errors';
import { identifierText, isSingleScript } from '#domain/commons/text';
import type { BatchStore, Pain001Reader } from '#domain/iso20022/ports';
import { submitBatch } from '#domain/iso20022/submit-batch';
import {
  MAX_XML_ATTRIBUTES,
  MAX_XML_DEPTH,
  MAX_XML_ELEMENTS,
  utf8XmlText,
  xmlShape,
} from '#domain/iso20022/xml-input';
import {
  deepPain001,
  manyElementsPain001,
  manyTransactionsPain001,
  minimalPain001,
} from '../../../scripts/bench/hostile-pain001.ts';

const LIMITS = {
  transactions: 2000,
  elements: MAX_XML_ELEMENTS,
  depth: MAX_XML_DEPTH,
  attributes: MAX_XML_ATTRIBUTES,
};

/** The real reader, counting the messages it was given. */
const countingReader = () => {
  const reads: number[] = [];
  const reader: Pain001Reader = {
    read: (xml) => {
      reads.push(xml.length);
      return pain001Reader.read(xml);
    },
  };
  return { reader, reads };
};

const unusedBatches = new Proxy({} as BatchStore, {
  get: () => () => {
    throw new Error('nothing is stored for a refused message');
  },
});

const submitXml = (reader: Pain001Reader, text: string) =>
  submitBatch(
    {
      store: { create: async () => true } as never,
      batches: unusedBatches,
      reader,
      clock: { now: () => new Date() },
    },
    { tenant: 't1', clientId: 'c1', servicer: {}, body: { kind: 'xml', text } },
  );

describe('the bounds of a pain.001, measured in one pass before parsing', () => {
  it('stop at the 2,001st transaction: the rest of the message is not read', () => {
    const xml = manyTransactionsPain001('MANY');
    const shape = xmlShape(xml, LIMITS);
    expect(shape.exceeded).toBe('transactions');
    expect(shape.transactions).toBe(2001);
    // 2,001 transactions of 6 elements and the frame: about a twentieth of the message.
    expect(shape.elements).toBeLessThan(2001 * 6 + 30);
    expect(shape.read).toBeLessThan(xml.length / 20);
  });

  it('stop at the 33rd level and at the 200,001st element', () => {
    const deep = deepPain001('DEEP');
    const depth = xmlShape(deep, LIMITS);
    expect(depth).toMatchObject({ exceeded: 'depth', deepest: 33 });
    expect(depth.read).toBeLessThan(deep.length / 100);
    const many = xmlShape(manyElementsPain001('ELEMENTS'), LIMITS);
    expect(many).toMatchObject({ exceeded: 'elements', elements: MAX_XML_ELEMENTS + 1 });
  });

  it.each([
    ['5 MiB of minimal transactions', manyTransactionsPain001('MANY'), BatchTooLargeError],
    ['600 subtrees 250 deep', deepPain001('DEEP'), InvalidRequestError],
    ['1.3 million empty elements', manyElementsPain001('ELEMENTS'), BatchTooLargeError],
  ])('refuse %s before the XML parser is given it', async (_name, xml, refusal) => {
    const { reader, reads } = countingReader();
    await expect(submitXml(reader, xml)).rejects.toBeInstanceOf(refusal);
    expect(reads).toEqual([]);
  });

  it('count a message exactly as XML reads it: comments, CDATA, instructions and quoted values hold no element', () => {
    const xml = `<?xml version="1.0"?><Document xmlns:p="urn:x"><CstmrCdtTrfInitn><!-- <PmtInf><CdtTrfTxInf> -->
<PmtInf a="x>y" b='<CdtTrfTxInf>'><p:CdtTrfTxInf/><![CDATA[<CdtTrfTxInf>]]><?pi <CdtTrfTxInf>?><CdtTrfTxInf><Amt/></CdtTrfTxInf></PmtInf>
<SplmtryData><CdtTrfTxInf/></SplmtryData></CstmrCdtTrfInitn></Document>`;
    expect(xmlShape(xml, LIMITS)).toEqual({
      elements: 8,
      transactions: 2,
      deepest: 4,
      read: xml.length,
    });
  });

  it('let a full message through: 2,000 transfers, as many elements as they need', () => {
    const shape = xmlShape(minimalPain001('FULL', 2000), LIMITS);
    expect(shape.transactions).toBe(2000);
    expect(shape.exceeded).toBeUndefined();
  });
});

describe('the encoding of a pain.001', () => {
  const refusal = (text: string) => {
    try {
      utf8XmlText(text);
    } catch (error) {
      return (error as InvalidRequestError).invalidParams[0]?.reason;
    }
    return undefined;
  };

  it('is UTF-8, with or without a byte order mark, declared or not', () => {
    expect(utf8XmlText('\uFEFF<?xml version="1.0" encoding="utf-8"?><a/>')).toBe(
      '<?xml version="1.0" encoding="utf-8"?><a/>',
    );
    expect(utf8XmlText("<?xml version='1.0'?><a/>")).toBe("<?xml version='1.0'?><a/>");
  });

  it('refuses text that is UTF-16 read as UTF-8, and a declaration of any other encoding', () => {
    expect(refusal('<\u0000?\u0000x\u0000m\u0000l\u0000')).toContain('must be encoded in UTF-8');
    expect(refusal('<?xml version="1.0" encoding="ISO-8859-1"?><a/>')).toContain(
      'declares encoding="ISO-8859-1": only UTF-8 is taken',
    );
    expect(refusal("<?xml version='1.0' encoding='UTF-16'?><a/>")).toContain('declares encoding="UTF-16"');
  });
});

describe('identifiers', () => {
  const reasonOf = (value: string) => {
    const parsed = identifierText(1, 35).safeParse(value);
    return parsed.success ? undefined : parsed.error.issues.map((issue) => issue.message);
  };

  it('take one script, or the mixes Japanese, Chinese and Korean ids are written in', () => {
    expect(isSingleScript('001-DDA-01')).toBe(true);
    expect(isSingleScript('Müller-Straße 1')).toBe(true);
    expect(isSingleScript('ΑΘΗΝΑ-7')).toBe(true);
    expect(isSingleScript('東京タワー-A1')).toBe(true);
    expect(isSingleScript('001-DDА-01')).toBe(false);
    expect(isSingleScript('ΑΘΗΝA')).toBe(false);
  });

  it('refuse compatibility forms and mixed scripts with one reason each', () => {
    expect(reasonOf('００１')).toEqual([expect.stringContaining('Unicode NFKC')]);
    expect(reasonOf('ﬁle-1')).toEqual([expect.stringContaining('Unicode NFKC')]);
    expect(reasonOf('Mu\u0308ller')).toEqual([expect.stringContaining('Unicode NFKC')]);
    expect(reasonOf('001-DDА-01')).toEqual([expect.stringContaining('must not mix letters')]);
    expect(reasonOf('a\u00A0b')).toEqual([expect.stringContaining('invisible or format characters')]);
    expect(reasonOf('Müller-1')).toBeUndefined();
  });
});
