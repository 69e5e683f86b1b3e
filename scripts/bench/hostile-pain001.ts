/**
 * pain.001 uploads an attacker would send, each under the 5 MiB body limit: what the bench's
 * hostile-upload section measures and the tests refuse.
 */

const MiB = 1024 * 1024;
const NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:pain.001.001.09';

const today = () => new Date().toISOString().slice(0, 10);

const header = (messageId: string, count: number, sum: string) =>
  `<GrpHdr><MsgId>${messageId}</MsgId><CreDtTm>2026-11-26T09:30:00Z</CreDtTm><NbOfTxs>${count}</NbOfTxs><CtrlSum>${sum}</CtrlSum><InitgPty><Nm>Attacker</Nm></InitgPty></GrpHdr>`;

/** A payment group with only what the schema requires: no ChrgBr or PmtTpInf a transaction could find early. */
const minimalGroup = (count: number, sum: string, date: string) =>
  `<PmtInf><PmtInfId>G1</PmtInfId><PmtMtd>TRF</PmtMtd><NbOfTxs>${count}</NbOfTxs><CtrlSum>${sum}</CtrlSum><ReqdExctnDt><Dt>${date}</Dt></ReqdExctnDt><Dbtr><Nm>A</Nm></Dbtr><DbtrAcct><Id><Othr><Id>acc-1</Id></Othr></Id></DbtrAcct><DbtrAgt><FinInstnId><BICFI>EXMPNL2A</BICFI></FinInstnId></DbtrAgt>`;

const MINIMAL_TRANSACTION =
  '<CdtTrfTxInf><PmtId><EndToEndId>E</EndToEndId></PmtId><Amt><InstdAmt Ccy="EUR">1</InstdAmt></Amt></CdtTrfTxInf>';

const document = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="${NAMESPACE}"><CstmrCdtTrfInitn>${body}</CstmrCdtTrfInitn></Document>`;

/**
 * One `PmtInf` of as many minimal `CdtTrfTxInf` as `bytes` allows (47,000 and more in 5 MiB),
 * valid against the schema, its NbOfTxs and CtrlSum right: only the count of transfers is wrong.
 */
export const manyTransactionsPain001 = (messageId: string, bytes = 5 * MiB - 1024): string => {
  const frame = document(`${header(messageId, 0, '0')}${minimalGroup(0, '0', today())}</PmtInf>`);
  const count = Math.floor((bytes - frame.length - 40) / MINIMAL_TRANSACTION.length);
  return document(
    header(messageId, count, String(count)) +
      minimalGroup(count, String(count), today()) +
      MINIMAL_TRANSACTION.repeat(count) +
      '</PmtInf>',
  );
};

/** A valid message of `count` minimal transfers in one group. */
export const minimalPain001 = (messageId: string, count: number, date = today()): string =>
  document(
    header(messageId, count, String(count)) +
      minimalGroup(count, String(count), date) +
      MINIMAL_TRANSACTION.repeat(count) +
      '</PmtInf>',
  );

/** `subtrees` supplementary data envelopes, each `depth` elements nested (600 of 250: about 1 MB). */
export const deepPain001 = (messageId: string, subtrees = 600, depth = 250): string => {
  const nested = `${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}`;
  const envelope = `<SplmtryData><Envlp>${nested}</Envlp></SplmtryData>`;
  return document(
    header(messageId, 1, '1') +
      minimalGroup(1, '1', today()) +
      MINIMAL_TRANSACTION +
      '</PmtInf>' +
      envelope.repeat(subtrees),
  );
};

/** One transfer, then empty elements in supplementary data up to `bytes` (about 1.3 million in 5 MiB). */
export const manyElementsPain001 = (messageId: string, bytes = 5 * MiB - 1024): string => {
  const frame = minimalPain001(messageId, 1);
  const count = Math.floor((bytes - frame.length - 60) / 4);
  return document(
    header(messageId, 1, '1') +
      minimalGroup(1, '1', today()) +
      MINIMAL_TRANSACTION +
      `</PmtInf><SplmtryData><Envlp><x>${'<a/>'.repeat(count)}</x></Envlp></SplmtryData>`,
  );
};
