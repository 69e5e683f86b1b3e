import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { optionalEnv, requiredEnv } from '#shared/config';
import { traced } from '#shared/tracer';

/** The one DynamoDB client of the service. DYNAMODB_ENDPOINT points it at the local dynalite. */
export const createDynamoDbClient = (endpoint = optionalEnv('DYNAMODB_ENDPOINT')): DynamoDBClient =>
  new DynamoDBClient(
    endpoint
      ? {
          endpoint,
          region: optionalEnv('AWS_REGION') ?? 'local',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          maxAttempts: 5,
        }
      : {},
  );

export const createDocumentClient = (endpoint = optionalEnv('DYNAMODB_ENDPOINT')): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(traced(createDynamoDbClient(endpoint)), {
    marshallOptions: { removeUndefinedValues: true },
  });

let shared: DynamoDBDocumentClient | undefined;
export const documentClient = (): DynamoDBDocumentClient => {
  shared ??= createDocumentClient();
  return shared;
};

export const tableName = (): string => requiredEnv('TABLE_NAME');
