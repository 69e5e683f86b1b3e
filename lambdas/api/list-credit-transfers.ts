import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { cursorKeyFromEnvironment } from '#adapters/commons/cursor-key';
import { DynamoDbCreditTransferList } from '#adapters/credit-transfers/credit-transfer-list';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import {
  type ListDependencies,
  listCreditTransfers as list,
} from '#domain/credit-transfers/list-credit-transfers';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { queryParameters } from './query-string.ts';
import { servicerHeaders } from './request-headers.ts';

export { queryParameters } from './query-string.ts';

let wired: ListDependencies | undefined;

/** The real adapters, built once per container on first use. */
export const listDependencies = (): ListDependencies => {
  wired ??= {
    // Its own store, not apiDependencies(): this function reads only, and bundles nothing else.
    store: new DynamoDbCreditTransferStore(documentClient(), tableName()),
    list: new DynamoDbCreditTransferList(documentClient(), tableName()),
    cursorKey: cursorKeyFromEnvironment(),
  };
  return wired;
};

export const listCreditTransfers =
  (dependencies: () => ListDependencies) =>
  async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const { tenant } = callerOf(event);
    servicerHeaders(event);
    const page = await list(dependencies(), { tenant, parameters: queryParameters(event) });
    return jsonResponse(200, page.creditTransfers, {
      'Pagination-Cursor': page.nextCursor,
      'Pagination-Total': String(page.total),
    });
  };

export const handler = httpHandler(listCreditTransfers(listDependencies));
