import type { APIGatewayProxyEvent } from 'aws-lambda';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbLimitCounters } from '#adapters/payment-controls/limit-counters';
import { type LimitUsageDependencies, limitUsage } from '#domain/payment-controls/limit-usage';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { paymentControlsDependencies } from './payment-controls-dependencies.ts';
import { queryParameters } from './query-string.ts';

let counters: DynamoDbLimitCounters | undefined;
const usageDependencies = (): LimitUsageDependencies => {
  counters ??= new DynamoDbLimitCounters(documentClient(), tableName());
  return { ...paymentControlsDependencies(), counters };
};

export const getPaymentControlsUsage = async (event: APIGatewayProxyEvent) => {
  const { tenant } = callerOf(event);
  return jsonResponse(200, await limitUsage(usageDependencies(), tenant, queryParameters(event)));
};

export const handler = httpHandler(getPaymentControlsUsage);
