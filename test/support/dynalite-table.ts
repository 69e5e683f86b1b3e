import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import { createTableInput } from '#adapters/table/table-definition';
import { createDynamoDbClient } from '#local/table';

const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => Server;

export interface DynaliteTable {
  documents: DocumentClient;
  close(): Promise<void>;
}

/** The service's table on an in-memory dynalite of its own (created at once: `createTableMs: 0`). */
export const startDynaliteTable = async (table: string): Promise<DynaliteTable> => {
  const server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await createDynamoDbClient(endpoint).send(new CreateTableCommand(createTableInput(table)));
  return {
    documents: createDocumentClient(endpoint),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
};
