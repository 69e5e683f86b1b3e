import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type InvalidParam, InvalidRequestError } from '#domain/commons/errors';
import {
  PAIN_001_VERSIONS,
  type Pain001Reader,
  type Pain001Version,
  type XmlTree,
} from '#domain/iso20022/ports';

/**
 * ISO 20022's own XML schemas (xsd/SOURCES.md) and the one XML parser, libxml2 compiled to
 * WebAssembly (libxml2-wasm): loaded at the first XML request, so JSON requests never pay for it.
 */
type Libxml = typeof import('libxml2-wasm');
let libxml: Promise<Libxml> | undefined;
const loadLibxml = (): Promise<Libxml> => {
  libxml ??= import('libxml2-wasm');
  return libxml;
};

export type SchemaName = Pain001Version | 'pain.002.001.10';

export const namespaceOf = (name: SchemaName): string => `urn:iso:std:iso:20022:tech:xsd:${name}`;

/**
 * Each schema's SHA-256, as xsd/SOURCES.md lists it: a file that differs (damaged, converted line
 * ends, or another profile put in its place) is refused before anything is validated with it.
 */
export const SCHEMA_SHA256: Readonly<Record<SchemaName, string>> = {
  'pain.001.001.03': '6bb5c6f24250ab807f31f6164142bafd6d43bad8d162a926e258ff4c11e128af',
  'pain.001.001.09': 'de038b373e47b0077b1832ddd81f4b2f1eb25d35721f62da1e38b7f5a09fda24',
  'pain.002.001.10': '2f9f8d0e9891fa9f31ccf0576397afe501614384d688ae6e43ba694b3d24b0cf',
};

/** A schema file that is not ISO's, byte for byte: the service must not start with it. */
export class SchemaDamagedError extends Error {
  constructor(file: string, digest: string) {
    super(`The XML schema ${file} has SHA-256 ${digest}, not ISO's file's: it is damaged or replaced`);
    this.name = 'SchemaDamagedError';
  }
}

/** Checks a schema's bytes against its SHA-256; its text when they match. */
export const checkedSchemaText = (name: SchemaName, bytes: Buffer): string => {
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== SCHEMA_SHA256[name]) throw new SchemaDamagedError(`${name}.xsd`, digest);
  return bytes.toString('utf8');
};

/** Beside the bundle on AWS (copied as assets), else in the project; checked byte for byte. */
const schemaText = (name: SchemaName): string => {
  const file = `${name}.xsd`;
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, file), join(here, 'xsd', file)]) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(candidate);
    } catch {
      continue;
    }
    return checkedSchemaText(name, bytes);
  }
  throw new Error(`The XML schema ${file} is missing beside the function`);
};

/**
 * The pain.001 schemas, read and checked when the module loads: a damaged file fails the batch
 * function's start (its cold start, or `npm start`'s first batch request) loudly, before any
 * message is taken.
 */
const PAIN_001_SCHEMA_TEXTS = new Map<SchemaName, string>(
  PAIN_001_VERSIONS.map((name) => [name, schemaText(name)]),
);

const validators = new Map<SchemaName, Promise<import('libxml2-wasm').XsdValidator>>();
const validatorOf = (name: SchemaName) => {
  let validator = validators.get(name);
  if (validator === undefined) {
    validator = loadLibxml().then(({ XmlDocument, XsdValidator }) => {
      const schema = XmlDocument.fromString(PAIN_001_SCHEMA_TEXTS.get(name) ?? schemaText(name));
      try {
        return XsdValidator.fromDoc(schema);
      } finally {
        schema.dispose();
      }
    });
    validators.set(name, validator);
  }
  return validator;
};

/**
 * Parse options: no entity substitution, no DTD loading, no external entity, no network. A DOCTYPE
 * is refused before parsing anyway: a payment message has none, and refusing it stops entity
 * expansion and external entities alike.
 */
const parseOptions = (lib: Libxml) =>
  lib.ParseOption.XML_PARSE_NONET |
  lib.ParseOption.XML_PARSE_NO_XXE |
  lib.ParseOption.XML_PARSE_NOERROR |
  lib.ParseOption.XML_PARSE_NOWARNING;

const refuse = (reason: string, name = '(body)'): never => {
  throw new InvalidRequestError('The XML message is not valid', [{ name, reason }]);
};

type LibxmlNode = import('libxml2-wasm').XmlNode;

/**
 * The next sibling of any node. libxml2-wasm gives `next` to the nodes it builds on (elements,
 * text, comments) but not to a processing instruction, which XML allows anywhere and which says
 * nothing to a payment: read through the same getter, it is stepped over like a comment.
 */
const nextSibling = (lib: Libxml, node: LibxmlNode): LibxmlNode | null =>
  (Object.getOwnPropertyDescriptor(lib.XmlTreeNode.prototype, 'next')?.get?.call(node) as
    | LibxmlNode
    | null
    | undefined) ?? null;

/**
 * The element as the domain reads it. Each path is its parent's plus the element's name, with a
 * position (from 1) only where siblings share the name, as ISO's paths are written:
 * `/Document/CstmrCdtTrfInitn/PmtInf[2]/CdtTrfTxInf`. Each node is visited once.
 */
const treeOf = (element: import('libxml2-wasm').XmlElement, lib: Libxml, path: string): XmlTree => {
  const elements: import('libxml2-wasm').XmlElement[] = [];
  const named = new Map<string, number>();
  let text = '';
  for (let child: LibxmlNode | null = element.firstChild; child !== null; child = nextSibling(lib, child)) {
    if (child instanceof lib.XmlElement) {
      elements.push(child);
      named.set(child.name, (named.get(child.name) ?? 0) + 1);
    } else if (child instanceof lib.XmlText || child instanceof lib.XmlCData) {
      text += child.content;
    }
  }
  const positions = new Map<string, number>();
  const children = elements.map((child) => {
    const position = (positions.get(child.name) ?? 0) + 1;
    positions.set(child.name, position);
    const step = (named.get(child.name) ?? 0) > 1 ? `${child.name}[${position}]` : child.name;
    return treeOf(child, lib, `${path}/${step}`);
  });
  const attributes = Object.fromEntries(element.attrs.map((attribute) => [attribute.name, attribute.value]));
  return { name: element.name, path, text: text.trim(), attributes, children };
};

/**
 * libxml2's path of a faulty node (every step a `*` with a position, as it writes nodes of a
 * default namespace) as the API names XML paths: `/Document/CstmrCdtTrfInitn/PmtInf[1]/Cdtr`.
 */
const namedPath = (root: XmlTree, xpath: string | undefined): string | undefined => {
  if (xpath === undefined) return undefined;
  const steps = xpath.split('/').slice(2);
  let node: XmlTree | undefined = root;
  for (const step of steps) {
    const position = /\[(\d+)\]$/.exec(step);
    const named = step.replace(/\[\d+\]$/, '').replace(/^\w+:/, '');
    const candidates: XmlTree[] = (node?.children ?? []).filter(
      (child) => named === '*' || child.name === named,
    );
    node = candidates[position ? Number(position[1]) - 1 : 0];
    if (node === undefined) return undefined;
  }
  return node?.path;
};

const validationFaults = (
  root: XmlTree,
  details: readonly { message: string; line: number; xpath?: string }[],
): InvalidParam[] =>
  details.slice(0, 50).map((detail) => ({
    name: namedPath(root, detail.xpath) ?? `(line ${detail.line})`,
    reason: detail.message.trim().replace(/\{urn:iso:std:iso:20022:tech:xsd:[^}]+\}/g, ''),
  }));

/** Parses `xml` and validates it against `expected` (or the schema its namespace names among them). */
export const readValidXml = async (
  xml: string,
  expected: readonly SchemaName[],
): Promise<{ schema: SchemaName; root: XmlTree }> => {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) refuse('must not declare a DTD or entities');
  const lib = await loadLibxml();
  let document: import('libxml2-wasm').XmlDocument;
  try {
    // Read as UTF-8 whatever a declaration says: the only encoding taken (xml-input.ts).
    document = lib.XmlDocument.fromString(xml, { option: parseOptions(lib), encoding: 'utf-8' });
  } catch (error) {
    const details = (error as { details?: { message: string; line: number }[] }).details ?? [];
    const first = details[0];
    return refuse(`is not well-formed XML${first ? ` (line ${first.line}: ${first.message.trim()})` : ''}`);
  }
  try {
    if (document.dtd !== null) refuse('must not declare a DTD or entities');
    const root = document.root;
    const schema = expected.find((name) => namespaceOf(name) === root.namespaceUri);
    if (root.name !== 'Document' || schema === undefined) {
      return refuse(
        `must be a Document in one of the namespaces ${expected.map(namespaceOf).join(', ')}`,
        '/Document',
      );
    }
    const named = treeOf(root, lib, '/Document');
    const validator = await validatorOf(schema);
    try {
      validator.validate(document);
    } catch (error) {
      const details =
        (error as { details?: { message: string; line: number; xpath?: string }[] }).details ?? [];
      throw new InvalidRequestError(
        `The XML message is not valid against the ${schema} schema`,
        validationFaults(named, details),
      );
    }
    return { schema, root: named };
  } finally {
    document.dispose();
  }
};

export const pain001Reader: Pain001Reader = {
  read: async (xml) => {
    const { schema, root } = await readValidXml(xml, PAIN_001_VERSIONS);
    return { version: schema as Pain001Version, root };
  },
};

/** Validates a pain.002.001.10 the service wrote (tests, and the doc's example). */
export const validatePain002 = (xml: string) => readValidXml(xml, ['pain.002.001.10']);
