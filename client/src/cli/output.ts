import type { CreditTransfer } from '../types.ts';

export const FORMATS = ['table', 'json', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

/** Every field of a credit transfer as the API names it, `paymentId` first: the CSV header. */
export const TRANSFER_FIELDS = [
  'paymentId',
  'status',
  'statusReason',
  'statusReasonCode',
  'date',
  'paymentMethod',
  'paymentType',
  'amount',
  'currency',
  'debtorAccountId',
  'creditorAccountId',
  'valueDate',
  'paymentReason',
  'purpose',
  'chargeBearerType',
  'domain',
  'family',
  'subFamily',
  'identifiers',
  'codes',
  'paymentProcessing',
  'exchange',
  'check',
  'creditor',
  'debtor',
  'remittanceInformation',
  'approval',
] as const satisfies readonly (keyof CreditTransfer)[];

// Compile-time proof that the list above names every field of the generated type.
type MissingField = Exclude<keyof CreditTransfer, (typeof TRANSFER_FIELDS)[number]>;
const everyFieldListed: [MissingField] extends [never] ? true : MissingField = true;
void everyFieldListed;

/** Columns that reach into a field: the parties' names. */
const NESTED_COLUMNS = ['creditor.name', 'debtor.name'] as const;

/** Every column `--columns` may name: each field of a transfer, and the parties' names. */
export const TRANSFER_COLUMNS: readonly string[] = [...TRANSFER_FIELDS, ...NESTED_COLUMNS];

/**
 * The columns CSV shows unless `--columns` says otherwise: what a reconciliation reads (who was
 * paid how much, where it stands and why, when), not the 25 fields most transfers leave empty.
 */
export const CSV_COLUMNS = [
  'paymentId',
  'status',
  'statusReason',
  'statusReasonCode',
  'amount',
  'currency',
  'creditor.name',
  'creditorAccountId',
  'debtorAccountId',
  'valueDate',
  'date',
] as const;

/** The columns a table shows: enough to tell transfers apart, one line each. */
const TABLE_FIELDS = [
  'paymentId',
  'status',
  'statusReason',
  'statusReasonCode',
  'amount',
  'currency',
  'debtorAccountId',
  'date',
];

/** The columns a `--columns` value names (comma-separated, or `all`), in its order, or the names it does not know. */
export const parseColumns = (text: string): { columns: string[] } | { unknown: string[] } => {
  if (text.trim() === 'all') return { columns: [...TRANSFER_COLUMNS] };
  const columns = text.split(',').map((name) => name.trim());
  const unknown = columns.filter((name) => !TRANSFER_COLUMNS.includes(name));
  return unknown.length > 0 ? { unknown } : { columns: [...new Set(columns)] };
};

export type Row = Record<string, unknown>;

/** A column's value: a field, or a field of a field (`creditor.name`). */
const valueAt = (row: Row, column: string): unknown =>
  column
    .split('.')
    .reduce<unknown>(
      (value, key) =>
        value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined,
      row,
    );

const cellText = (value: unknown): string =>
  value === undefined || value === null
    ? ''
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);

/** RFC 4180: quote a field holding a comma, quote, CR or LF, doubling its quotes. */
export const csvField = (value: unknown): string => {
  const text = cellText(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

export const csvLine = (fields: readonly string[], row: Row): string =>
  `${fields.map((field) => csvField(valueAt(row, field))).join(',')}\r\n`;

export const csv = (fields: readonly string[], rows: readonly Row[]): string =>
  `${fields.join(',')}\r\n${rows.map((row) => csvLine(fields, row)).join('')}`;

export const table = (fields: readonly string[], rows: readonly Row[]): string => {
  const cells = rows.map((row) =>
    fields.map((field) => cellText(valueAt(row, field)).replaceAll(/\s+/g, ' ')),
  );
  const widths = fields.map((field, column) =>
    Math.max(field.length, ...cells.map((line) => line[column]?.length ?? 0)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, column) => value.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[line(fields), ...cells.map(line)].join('\n')}\n`;
};

/**
 * Transfers in the chosen format: one JSON array (every field), a CSV document or a table, of
 * `columns` when given (CSV_COLUMNS and TABLE_FIELDS otherwise).
 */
export const formatTransfers = (
  format: Format,
  transfers: readonly CreditTransfer[],
  columns?: readonly string[],
): string => {
  const rows = transfers as readonly Row[];
  if (format === 'json') return `${JSON.stringify(transfers, null, 2)}\n`;
  if (format === 'csv') return csv(columns ?? CSV_COLUMNS, rows);
  return table(columns ?? TABLE_FIELDS, rows);
};

/** One transfer (an answer of initiate, status or cancel) exactly as the service sent it. */
export const formatTransfer = (
  format: Format,
  transfer: CreditTransfer,
  columns?: readonly string[],
): string =>
  format === 'json' ? `${JSON.stringify(transfer, null, 2)}\n` : formatTransfers(format, [transfer], columns);

/**
 * Column widths of tables printed line by line (status --watch, poll), where later lines cannot
 * widen a column: wide enough for every value these fields hold.
 */
const STREAM_WIDTHS: Record<string, number> = {
  createdAt: 24,
  id: 36,
  type: 30,
  forwarded: 9,
  durationMs: 10,
  changeId: 22,
  paymentId: 36,
  previousStatus: 27,
  status: 27,
  statusReason: 20,
  statusReasonCode: 16,
  date: 24,
};

/**
 * A stream of records printed one by one: JSON lines, or CSV rows and table lines after one
 * header row (printed with the first record).
 */
export class LineWriter {
  #headerDone = false;
  constructor(
    private readonly format: Format,
    private readonly fields: readonly string[],
    private readonly write: (text: string) => void,
  ) {}

  #tableLine(values: readonly string[]): string {
    return `${values
      .map((value, column) => value.padEnd(STREAM_WIDTHS[this.fields[column] ?? ''] ?? 0))
      .join('  ')
      .trimEnd()}\n`;
  }

  line(value: object): void {
    const record = value as Row;
    if (this.format === 'json') {
      this.write(`${JSON.stringify(record)}\n`);
      return;
    }
    if (!this.#headerDone)
      this.write(this.format === 'csv' ? `${this.fields.join(',')}\r\n` : this.#tableLine(this.fields));
    this.#headerDone = true;
    if (this.format === 'csv') this.write(csvLine(this.fields, record));
    else this.write(this.#tableLine(this.fields.map((field) => cellText(valueAt(record, field)) || '-')));
  }
}

/** Records of any kind in the chosen format: a JSON array, a CSV document (every field), or a table. */
export const formatRecords = (
  format: Format,
  records: readonly object[],
  fields: readonly string[],
  tableFields: readonly string[] = fields,
  asRows: (record: object) => Row = (record) => record as Row,
): string => {
  if (format === 'json') return `${JSON.stringify(records, null, 2)}\n`;
  const rows = records.map(asRows);
  return format === 'csv' ? csv(fields, rows) : table(tableFields, rows);
};

/** One record (an answer of create, get, rotate-secret) exactly as the service sent it. */
export const formatRecord = (
  format: Format,
  record: object,
  fields: readonly string[],
  tableFields: readonly string[] = fields,
  asRows?: (record: object) => Row,
): string =>
  format === 'json'
    ? `${JSON.stringify(record, null, 2)}\n`
    : formatRecords(format, [record], fields, tableFields, asRows);
