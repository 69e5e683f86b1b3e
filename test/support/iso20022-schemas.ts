import { readFile } from 'node:fs/promises';
import { XmlDocument, XsdValidator } from 'libxml2-wasm';
import { expect } from 'vitest';

/**
 * Validates ISO 20022 messages in tests against ISO's schema of their namespace (the files in
 * lambdas/adapters/iso20022/xsd), with libxml2 (libxml2-wasm) directly: independent of the
 * service's own reader, so a test never takes the code under test's word for a message's validity.
 */
const XSD = new URL('../../lambdas/adapters/iso20022/xsd/', import.meta.url);
const NAMESPACE_PREFIX = 'urn:iso:std:iso:20022:tech:xsd:';

const validators = new Map<string, Promise<XsdValidator>>();
const validatorOf = (schema: string): Promise<XsdValidator> => {
  let validator = validators.get(schema);
  if (validator === undefined) {
    validator = readFile(new URL(`${schema}.xsd`, XSD)).then((bytes) => {
      const document = XmlDocument.fromBuffer(bytes);
      try {
        return XsdValidator.fromDoc(document);
      } finally {
        document.dispose();
      }
    });
    validators.set(schema, validator);
  }
  return validator;
};

/** The schema (`pain.001.001.09`, ...) a message's namespace names, and the faults found against it. */
export const iso20022Faults = async (
  xml: string | Uint8Array,
): Promise<{ schema: string; faults: string[] }> => {
  const document = typeof xml === 'string' ? XmlDocument.fromString(xml) : XmlDocument.fromBuffer(xml);
  try {
    const namespace = document.root.namespaceUri;
    if (!namespace.startsWith(NAMESPACE_PREFIX)) return { schema: '', faults: [`namespace ${namespace}`] };
    const schema = namespace.slice(NAMESPACE_PREFIX.length);
    const validator = await validatorOf(schema);
    try {
      validator.validate(document);
      return { schema, faults: [] };
    } catch (error) {
      const details = (error as { details?: { message: string; line: number }[] }).details ?? [];
      return { schema, faults: details.map((detail) => `line ${detail.line}: ${detail.message.trim()}`) };
    }
  } finally {
    document.dispose();
  }
};

/** Expects `xml` valid against ISO's schema `schema` (a pain.002 answer: `pain.002.001.10`). */
export const expectValidIso20022 = async (
  xml: string | Uint8Array,
  schema: string | RegExp,
): Promise<void> => {
  const result = await iso20022Faults(xml);
  expect(result.faults).toEqual([]);
  if (typeof schema === 'string') expect(result.schema).toBe(schema);
  else expect(result.schema).toMatch(schema);
};

/** Expects an answer of the service to be a pain.002.001.10 valid against ISO's schema. */
export const expectValidPain002 = (xml: string): Promise<void> => expectValidIso20022(xml, 'pain.002.001.10');

/** Expects a pain.001 (.001.03 or .001.09) valid against ISO's schema of its version. */
export const expectValidPain001 = (xml: string | Uint8Array): Promise<void> =>
  expectValidIso20022(xml, /^pain\.001\.001\.0[39]$/);
