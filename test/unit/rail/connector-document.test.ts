import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ConnectorRail } from '#adapters/credit-transfers/connector-rail';
import { CONNECTOR_DOCUMENT_PATH, connectorDocument } from '../../../scripts/connector-openapi.ts';

describe('connector contract document', () => {
  it('is committed as the schemas generate it', async () => {
    const committed = JSON.parse(await readFile(CONNECTOR_DOCUMENT_PATH, 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(connectorDocument())));
  });

  it('has one operation for every call the connector rail makes', () => {
    const railCalls = Object.getOwnPropertyNames(ConnectorRail.prototype).filter(
      (name) => name !== 'constructor' && name !== 'call' && name !== 'attempt',
    );
    const operations = Object.values(connectorDocument().paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).map(
        (operation) => operation.operationId,
      ),
    );
    expect(operations.sort()).toEqual(railCalls.sort());
  });

  it('documents every answer body the rail accepts as a component the bank can implement', () => {
    const { components, paths } = connectorDocument();
    const refs = JSON.stringify(paths).match(/#\/components\/schemas\/\w+/g) ?? [];
    for (const ref of refs) expect(components?.schemas).toHaveProperty(ref.split('/').at(-1) as string);
    expect(refs.length).toBeGreaterThanOrEqual(4);
  });
});
