import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '#routes';
import { OPERATIONS_WITH_SDK_SAMPLES, SDK_PACKAGE } from '../../../scripts/openapi-code-samples.ts';
import { buildOpenApiDocument } from '../../../scripts/openapi-document.ts';
import { operationsOf } from './helpers.ts';

const root = resolve(import.meta.dirname, '..', '..', '..');
const document = buildOpenApiDocument();

interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

const samplesOf = (operation: object): CodeSample[] =>
  (operation as { 'x-codeSamples'?: CodeSample[] })['x-codeSamples'] ?? [];

/**
 * Type-checks sources as a strict TypeScript project that imports the SDK from client/src (the
 * package name mapped to it), so a sample calling what the SDK does not have fails here.
 */
const typeErrors = (sources: Record<string, string>): string[] => {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [resolve(root, 'node_modules/@types')],
    baseUrl: root,
    paths: { [SDK_PACKAGE]: ['client/src/index.ts'] },
  };
  const files = Object.fromEntries(
    Object.entries(sources).map(([name, source]) => [
      resolve(root, 'client', '.samples', `${name}.mts`),
      source,
    ]),
  );
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (name) => files[name] ?? readFile(name);
  host.fileExists = (name) => name in files || fileExists(name);
  const program = ts.createProgram(Object.keys(files), options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file === undefined || diagnostic.file.fileName in files)
    .map((diagnostic) => {
      const where = diagnostic.file?.fileName.split('/').pop() ?? '';
      return `${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
};

describe('the SDK samples of the reference page', () => {
  it('are on every operation the SDK has a call for, beside curl (which the page writes)', () => {
    const withSamples = operationsOf(document)
      .filter(({ operation }) => samplesOf(operation).length > 0)
      .map(({ operation }) => operation.operationId);
    expect(withSamples.sort()).toEqual(
      ROUTES.map((route) => route.operationId)
        .filter((id) => OPERATIONS_WITH_SDK_SAMPLES.includes(id))
        .sort(),
    );
    expect(withSamples).toEqual(
      expect.arrayContaining([
        'issueToken',
        'initiateCreditTransfer',
        'getCreditTransferStatus',
        'listCreditTransfers',
        'cancelCreditTransfer',
      ]),
    );
    for (const { operation } of operationsOf(document)) {
      for (const sample of samplesOf(operation)) {
        expect(sample).toMatchObject({ lang: 'TypeScript', label: 'TypeScript SDK' });
        expect(sample.source).toContain(`from '${SDK_PACKAGE}'`);
        expect(sample.source).toContain("baseUrl: '{publicUrl}'");
      }
    }
  });

  it('type-check against the SDK in client/src', () => {
    const sources = Object.fromEntries(
      operationsOf(document).flatMap(({ operation }) =>
        samplesOf(operation).map((sample) => [operation.operationId, `${sample.source}\nexport {};\n`]),
      ),
    );
    expect(Object.keys(sources).length).toBeGreaterThanOrEqual(5);
    expect(typeErrors(sources)).toEqual([]);
    // The check itself: a call the SDK does not have is an error.
    expect(
      typeErrors({ wrong: `${sources.initiateCreditTransfer}\nawait client.initiatePayment({});\n` }).join(
        '\n',
      ),
    ).toMatch(/initiatePayment/);
  }, 60_000);
});
