import type { Pain001Version, XmlTree } from './ports.ts';
import { END_TO_END_ID_SCHEME, INSTRUCTION_ID_SCHEME } from './transfer-report.ts';

/**
 * A pain.001 (.001.09 or .001.03, already valid against its schema) read into credit transfer
 * requests, one per `CdtTrfTxInf`, in message order. docs/iso20022.md has the table of what each
 * element becomes and what is dropped.
 */

export interface MessageTransaction {
  /** The XML path of its `CdtTrfTxInf`. */
  path: string;
  /** The credit transfer request it becomes, exactly what the JSON API would take. */
  transfer: Record<string, unknown>;
  /** The XML path each field of `transfer` came from, by its name in `invalidParams`. */
  sources: Record<string, string>;
  /** Its `PmtId` as written, which every pain.002 answering it repeats. */
  identification?: PaymentIdentification;
}

export interface PaymentIdentification {
  instructionId?: string;
  endToEndId?: string;
  uetr?: string;
}

export interface MessageGroup {
  path: string;
  paymentInformationId: string;
  paymentInformationIdPath: string;
  /** `ReqdExctnDt`'s date (`YYYY-MM-DD`), and where it was. */
  executionDate?: { value: string; path: string };
  numberOfTransactions?: { value: string; path: string };
  controlSum?: { value: string; path: string };
  /** `BtchBookg` (xs:boolean: `true`/`1`, `false`/`0`); absent when the group does not say. */
  batchBooking?: boolean;
  transactions: MessageTransaction[];
}

export interface Pain001Message {
  version: Pain001Version;
  messageId: string;
  messageIdPath: string;
  createdAt: string;
  numberOfTransactions: { value: string; path: string };
  controlSum?: { value: string; path: string };
  groups: MessageGroup[];
  /** Elements the service cannot carry faithfully, refused rather than dropped (an amount in another form). */
  unsupported: { path: string; reason: string }[];
}

/**
 * Each element's children by name, built once on first look: a group's fields are read for each of
 * its transactions, and a scan of its children each time would make reading quadratic.
 */
const byName = new WeakMap<XmlTree, Map<string, XmlTree[]>>();
const children = (tree: XmlTree | undefined, name: string): readonly XmlTree[] => {
  if (tree === undefined) return [];
  let index = byName.get(tree);
  if (index === undefined) {
    index = new Map();
    for (const node of tree.children) {
      const same = index.get(node.name);
      if (same === undefined) index.set(node.name, [node]);
      else same.push(node);
    }
    byName.set(tree, index);
  }
  return index.get(name) ?? [];
};
const child = (tree: XmlTree | undefined, name: string): XmlTree | undefined => children(tree, name)[0];
const at = (tree: XmlTree | undefined, ...names: string[]): XmlTree | undefined =>
  names.reduce<XmlTree | undefined>((node, name) => child(node, name), tree);

/** Builds one transfer, noting where each field came from. */
class TransferBuilder {
  readonly transfer: Record<string, unknown> = {};
  readonly sources: Record<string, string> = {};

  /** Sets `field` (a dotted path) from an element's text, when the element is there. */
  set(field: string, node: XmlTree | undefined, value: string | undefined = node?.text): void {
    if (node === undefined || value === undefined) return;
    const keys = field.split('.');
    let target = this.transfer;
    for (const key of keys.slice(0, -1)) {
      target[key] ??= {};
      target = target[key] as Record<string, unknown>;
    }
    target[keys.at(-1) as string] = value;
    this.sources[field] = node.path;
  }

  /** Appends an identifier (`{ number, schemeName }`) to the array at `field`. */
  identifier(field: string, node: XmlTree | undefined, schemeName: string): void {
    if (node === undefined) return;
    const list = (this.lookup(field) as unknown[] | undefined) ?? [];
    this.set(field, node, undefined);
    const index = list.length;
    list.push({ number: node.text, schemeName });
    this.place(field, list);
    this.sources[`${field}[${index}].number`] = node.path;
    this.sources[`${field}[${index}]`] = node.path;
  }

  private lookup(field: string): unknown {
    return field
      .split('.')
      .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], this.transfer);
  }

  private place(field: string, value: unknown): void {
    const keys = field.split('.');
    let target = this.transfer;
    for (const key of keys.slice(0, -1)) {
      target[key] ??= {};
      target = target[key] as Record<string, unknown>;
    }
    target[keys.at(-1) as string] = value;
  }

  /** Appends a line to the array at `field`. */
  line(field: string, node: XmlTree): void {
    const list = (this.lookup(field) as string[] | undefined) ?? [];
    this.sources[`${field}[${list.length}]`] = node.path;
    this.sources[field] ??= node.path;
    list.push(node.text);
    this.place(field, list);
  }
}

export const CHARGE_BEARERS: Readonly<Record<string, string>> = {
  DEBT: 'BorneByDebtor',
  CRED: 'BorneByCreditor',
  SHAR: 'Shared',
  SLEV: 'FollowingServiceLevel',
};

export const PAYMENT_METHODS: Readonly<Record<string, string>> = {
  TRF: 'CreditTransfer',
  TRA: 'CreditTransfer',
};

/** A code or its proprietary form (`Cd` | `Prtry`), as ISO's choices write it. */
const codeOrProprietary = (tree: XmlTree | undefined): XmlTree | undefined =>
  child(tree, 'Cd') ?? child(tree, 'Prtry');

const POSTAL_ADDRESS_FIELDS: readonly [string, string][] = [
  ['Dept', 'department'],
  ['SubDept', 'subDepartment'],
  ['StrtNm', 'streetName'],
  ['BldgNb', 'buildingNumber'],
  ['BldgNm', 'buildingName'],
  ['Flr', 'floor'],
  ['PstBx', 'postBox'],
  ['Room', 'room'],
  ['PstCd', 'postCode'],
  ['TwnNm', 'townName'],
  ['TwnLctnNm', 'townLocationName'],
  ['DstrctNm', 'districtName'],
  ['CtrySubDvsn', 'countrySubDivision'],
  ['Ctry', 'country'],
];

const postalAddress = (builder: TransferBuilder, field: string, address: XmlTree | undefined): void => {
  if (address === undefined) return;
  builder.set(`${field}.addressType`, codeOrProprietary(child(address, 'AdrTp')) ?? child(address, 'AdrTp'));
  for (const [element, name] of POSTAL_ADDRESS_FIELDS)
    builder.set(`${field}.${name}`, child(address, element));
  for (const line of children(address, 'AdrLine')) builder.line(`${field}.addressLine`, line);
};

/** An account's id: its IBAN, or its other identification. */
const accountId = (account: XmlTree | undefined): XmlTree | undefined =>
  at(account, 'Id', 'IBAN') ?? at(account, 'Id', 'Othr', 'Id');

const party = (
  builder: TransferBuilder,
  field: 'debtor' | 'creditor',
  partyTree: XmlTree | undefined,
  account: XmlTree | undefined,
  agent: XmlTree | undefined,
): void => {
  builder.set(`${field}.name`, child(partyTree, 'Nm'));
  postalAddress(builder, `${field}.postalAddress`, child(partyTree, 'PstlAdr'));
  builder.set(`${field}.countryOfResidence`, child(partyTree, 'CtryOfRes'));
  if (account !== undefined) {
    const iban = at(account, 'Id', 'IBAN');
    builder.set(`${field}.account.accountNumber`, accountId(account));
    if (iban !== undefined) builder.identifier(`${field}.account.identifiers`, iban, 'IBAN');
    builder.set(`${field}.account.currency`, child(account, 'Ccy'));
    builder.set(`${field}.account.name`, child(account, 'Nm'));
    builder.set(`${field}.account.accountType`, codeOrProprietary(child(account, 'Tp')));
  }
  const institution = child(agent, 'FinInstnId');
  if (institution !== undefined) {
    const bic = child(institution, 'BICFI') ?? child(institution, 'BIC');
    if (bic !== undefined) builder.identifier(`${field}.agent.identifiers`, bic, 'BIC');
    builder.set(`${field}.agent.clearingSystemMemberIdentification`, at(institution, 'ClrSysMmbId', 'MmbId'));
    builder.set(`${field}.agent.name`, child(institution, 'Nm'));
    postalAddress(builder, `${field}.agent.postalAddress`, child(institution, 'PstlAdr'));
  }
};

/** `PmtTpInf` of the group, each field overridden by the transaction's own. */
const paymentProcessing = (
  builder: TransferBuilder,
  group: XmlTree | undefined,
  transaction: XmlTree | undefined,
) => {
  const field = (name: string, ...path: string[]) => {
    const own = at(child(transaction, 'PmtTpInf'), ...path);
    const shared = at(child(group, 'PmtTpInf'), ...path);
    const node = own ?? shared;
    builder.set(`paymentProcessing.${name}`, path.at(-1) === 'InstrPrty' ? node : codeOrProprietary(node));
  };
  field('instructionPriority', 'InstrPrty');
  field('serviceLevel', 'SvcLvl');
  field('localInstrument', 'LclInstrm');
  field('categoryPurpose', 'CtgyPurp');
};

/** `ReqdExctnDt`: a date (.03), or a date or date-time choice (.09); the date is the value date. */
const executionDate = (group: XmlTree): XmlTree | undefined => {
  const requested = child(group, 'ReqdExctnDt');
  if (requested === undefined) return undefined;
  const date = child(requested, 'Dt') ?? child(requested, 'DtTm') ?? requested;
  return { ...date, text: date.text.slice(0, 10) };
};

const remittance = (builder: TransferBuilder, transaction: XmlTree): void => {
  const information = child(transaction, 'RmtInf');
  for (const line of children(information, 'Ustrd')) {
    const current = builder.transfer.purpose as string | undefined;
    builder.set('purpose', line, current === undefined ? line.text : `${current}\n${line.text}`);
  }
  const structured = children(information, 'Strd')[0];
  builder.set(
    'remittanceInformation.remittanceNumber',
    at(structured, 'CdtrRefInf', 'Ref') ?? at(structured, 'RfrdDocInf', 'Nb'),
  );
  builder.set(
    'remittanceInformation.documentType',
    codeOrProprietary(at(structured, 'RfrdDocInf', 'Tp', 'CdOrPrtry')),
  );
};

const transactionOf = (group: XmlTree, transaction: XmlTree): MessageTransaction => {
  const builder = new TransferBuilder();
  const method = child(group, 'PmtMtd');
  builder.set('paymentMethod', method, PAYMENT_METHODS[method?.text ?? ''] ?? method?.text);
  const amount = at(transaction, 'Amt', 'InstdAmt');
  builder.set('amount', amount);
  if (amount !== undefined)
    builder.set('currency', { ...amount, path: `${amount.path}/@Ccy` }, amount.attributes.Ccy);
  builder.set('debtorAccountId', accountId(child(group, 'DbtrAcct')));
  builder.set('creditorAccountId', accountId(child(transaction, 'CdtrAcct')));
  builder.set('valueDate', executionDate(group));
  const bearer = child(transaction, 'ChrgBr') ?? child(group, 'ChrgBr');
  builder.set('chargeBearerType', bearer, CHARGE_BEARERS[bearer?.text ?? ''] ?? bearer?.text);
  paymentProcessing(builder, group, transaction);
  builder.set('paymentReason', codeOrProprietary(child(transaction, 'Purp')));
  remittance(builder, transaction);
  const paymentId = child(transaction, 'PmtId');
  builder.identifier('identifiers', child(paymentId, 'EndToEndId'), END_TO_END_ID_SCHEME);
  builder.identifier('identifiers', child(paymentId, 'InstrId'), INSTRUCTION_ID_SCHEME);
  builder.identifier('identifiers', child(paymentId, 'UETR'), 'UETR');
  party(builder, 'debtor', child(group, 'Dbtr'), child(group, 'DbtrAcct'), child(group, 'DbtrAgt'));
  party(
    builder,
    'creditor',
    child(transaction, 'Cdtr'),
    child(transaction, 'CdtrAcct'),
    child(transaction, 'CdtrAgt'),
  );
  return { path: transaction.path, transfer: builder.transfer, sources: builder.sources };
};

/** `PmtId/InstrId`, `EndToEndId` and `UETR` (.09 only) of a transaction. */
const paymentIdentificationOf = (transaction: XmlTree): PaymentIdentification => {
  const ids = child(transaction, 'PmtId');
  const text = (name: string) => child(ids, name)?.text;
  const [instructionId, endToEndId, uetr] = [text('InstrId'), text('EndToEndId'), text('UETR')];
  return {
    ...(instructionId !== undefined && { instructionId }),
    ...(endToEndId !== undefined && { endToEndId }),
    ...(uetr !== undefined && { uetr }),
  };
};

const counted = (node: XmlTree | undefined) =>
  node === undefined ? undefined : { value: node.text, path: node.path };

export const readPain001 = (version: Pain001Version, root: XmlTree): Pain001Message => {
  const initiation = child(root, 'CstmrCdtTrfInitn');
  const header = child(initiation, 'GrpHdr');
  const unsupported: Pain001Message['unsupported'] = [];
  const groups = children(initiation, 'PmtInf').map((group): MessageGroup => {
    const method = child(group, 'PmtMtd');
    if (method !== undefined && PAYMENT_METHODS[method.text] === undefined)
      unsupported.push({ path: method.path, reason: 'must be TRF or TRA: only credit transfers are taken' });
    const transactions = children(group, 'CdtTrfTxInf');
    for (const transaction of transactions) {
      const equivalent = at(transaction, 'Amt', 'EqvtAmt');
      if (equivalent !== undefined)
        unsupported.push({
          path: equivalent.path,
          reason: 'is not taken: give the amount as InstdAmt in the currency to pay',
        });
    }
    const numberOfTransactions = counted(child(group, 'NbOfTxs'));
    const controlSum = counted(child(group, 'CtrlSum'));
    const executionDay = counted(executionDate(group));
    const batchBooking = child(group, 'BtchBookg')?.text;
    return {
      path: group.path,
      paymentInformationId: child(group, 'PmtInfId')?.text ?? '',
      paymentInformationIdPath: `${group.path}/PmtInfId`,
      ...(executionDay !== undefined && { executionDate: executionDay }),
      ...(numberOfTransactions !== undefined && { numberOfTransactions }),
      ...(controlSum !== undefined && { controlSum }),
      ...(batchBooking !== undefined && { batchBooking: batchBooking === 'true' || batchBooking === '1' }),
      transactions: transactions.map((transaction) => ({
        ...transactionOf(group, transaction),
        identification: paymentIdentificationOf(transaction),
      })),
    };
  });
  const controlSum = counted(child(header, 'CtrlSum'));
  return {
    version,
    messageId: child(header, 'MsgId')?.text ?? '',
    messageIdPath: `${header?.path ?? '/Document/CstmrCdtTrfInitn/GrpHdr'}/MsgId`,
    createdAt: child(header, 'CreDtTm')?.text ?? '',
    numberOfTransactions: counted(child(header, 'NbOfTxs')) ?? { value: '', path: `${header?.path}/NbOfTxs` },
    ...(controlSum !== undefined && { controlSum }),
    groups,
    unsupported,
  };
};
