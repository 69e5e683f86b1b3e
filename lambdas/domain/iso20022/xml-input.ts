import { BatchTooLargeError, InvalidRequestError } from '../commons/errors.ts';

/**
 * What a pain.001's text must be before the XML parser sees it: UTF-8 only, and within bounds of
 * size and shape that one linear pass measures, so a hostile message costs a bounded amount of
 * work whatever it holds (docs/iso20022.md, "Bounds").
 */

export interface XmlLimits {
  /** `CdtTrfTxInf` in `PmtInf` (413 above). */
  transactions: number;
  /** Elements in the whole message (413 above). */
  elements: number;
  /** Elements open at once (400 above). */
  depth: number;
  /** Attributes and namespace declarations on one element (400 above). */
  attributes: number;
}

/** Deeper than any pain.001 path (the deepest ISO element is 11 levels down), as deep as a JSON body may nest. */
export const MAX_XML_DEPTH = 32;
/** A hundred elements per transfer on average: a full address, remittance and ids on each of 2,000. */
export const MAX_XML_ELEMENTS = 200_000;
/** A pain.001 element has at most one attribute (`Ccy`) besides its namespace declarations. */
export const MAX_XML_ATTRIBUTES = 32;

export interface XmlShape {
  elements: number;
  transactions: number;
  deepest: number;
  /** Characters read: the pass stops at the first bound passed. */
  read: number;
  exceeded?: keyof XmlLimits;
}

/** The index just past `terminator` from `from`, or -1 when the text ends first. */
const after = (text: string, terminator: string, from: number): number => {
  const found = text.indexOf(terminator, from);
  return found === -1 ? -1 : found + terminator.length;
};

const TAG_NAME = /[^\s/>]+/y;
const QUOTE = /["']/;

/**
 * Counts elements, transactions, depth and attributes in one pass over the text, each character
 * read a bounded number of times, stopping at the first bound passed. Comments, CDATA, processing
 * instructions and quoted attribute values are skipped as XML reads them, so a well-formed message
 * is counted exactly as the parser will build it; a malformed one is the parser's to refuse.
 */
export const xmlShape = (text: string, limits: XmlLimits): XmlShape => {
  const open: string[] = [];
  let elements = 0;
  let transactions = 0;
  let deepest = 0;
  let at = text.indexOf('<');
  const stop = (exceeded: keyof XmlLimits): XmlShape => ({
    elements,
    transactions,
    deepest,
    read: at,
    exceeded,
  });
  while (at !== -1) {
    let end: number;
    if (text.startsWith('<!--', at)) end = after(text, '-->', at + 4);
    else if (text.startsWith('<![CDATA[', at)) end = after(text, ']]>', at + 9);
    else if (text.startsWith('<?', at)) end = after(text, '?>', at + 2);
    else if (text.startsWith('<!', at)) end = after(text, '>', at + 2);
    else if (text.startsWith('</', at)) {
      open.pop();
      end = after(text, '>', at + 2);
    } else {
      TAG_NAME.lastIndex = at + 1;
      const name = TAG_NAME.exec(text)?.[0] ?? '';
      let position = at + 1 + name.length;
      let attributes = 0;
      for (; position < text.length; position++) {
        const character = text[position] as string;
        if (character === '>') break;
        if (character === '=') attributes++;
        else if (QUOTE.test(character)) {
          position = text.indexOf(character, position + 1);
          if (position === -1) break;
        }
      }
      if (position === -1 || position >= text.length) break;
      elements++;
      if (elements > limits.elements) return stop('elements');
      if (attributes > limits.attributes) return stop('attributes');
      const local = name.slice(name.indexOf(':') + 1);
      if (local === 'CdtTrfTxInf' && open.length === 3 && open[2] === 'PmtInf') {
        transactions++;
        if (transactions > limits.transactions) return stop('transactions');
      }
      if (text[position - 1] !== '/') {
        open.push(local);
        deepest = Math.max(deepest, open.length);
        if (open.length > limits.depth) return stop('depth');
      }
      end = position + 1;
    }
    if (end === -1) break;
    at = text.indexOf('<', end);
  }
  return { elements, transactions, deepest, read: text.length };
};

const refuse = (reason: string): never => {
  throw new InvalidRequestError('The XML message is not valid', [{ name: '(body)', reason }]);
};

/** Refuses, before any per-transaction work, a message past one of `limits`. */
export const checkXmlBounds = (text: string, limits: XmlLimits): XmlShape => {
  const shape = xmlShape(text, limits);
  switch (shape.exceeded) {
    case 'transactions':
      throw new BatchTooLargeError(
        `The batch holds more than ${limits.transactions} credit transfers; at most ${limits.transactions} are taken in one request`,
      );
    case 'elements':
      throw new BatchTooLargeError(
        `The message holds more than ${limits.elements} XML elements; at most ${limits.elements} are taken in one request`,
      );
    case 'depth':
      return refuse(`must not nest elements more than ${limits.depth} levels deep`);
    case 'attributes':
      return refuse(`must not give one element more than ${limits.attributes} attributes`);
    default:
      return shape;
  }
};

const BYTE_ORDER_MARK = '\uFEFF';
/** The encoding the XML declaration names, if it names one. */
const DECLARED_ENCODING = /^<\?xml\s[^?]*?\bencoding\s*=\s*(["'])([^"']*)\1/;

/**
 * The message as UTF-8 text, without its byte order mark: the one encoding taken. A NUL is never
 * XML, and is what UTF-16 or UTF-32 without a byte order mark looks like once read as UTF-8; a
 * declaration naming another encoding would have the parser read the bytes as other characters.
 */
export const utf8XmlText = (body: string): string => {
  const text = body.startsWith(BYTE_ORDER_MARK) ? body.slice(1) : body;
  if (text.includes('\u0000'))
    refuse(
      'must be encoded in UTF-8: it holds NUL characters, as UTF-16 or UTF-32 text does; only UTF-8 (with or without a byte order mark) is taken',
    );
  const declared = DECLARED_ENCODING.exec(text)?.[2];
  if (declared !== undefined && declared.toUpperCase() !== 'UTF-8')
    refuse(
      `declares encoding="${/^[\w.:-]{1,40}$/.test(declared) ? declared : '…'}": only UTF-8 is taken; send the message as UTF-8 and declare encoding="UTF-8", or no encoding`,
    );
  return text;
};
