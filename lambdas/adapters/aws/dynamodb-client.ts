import type { Agent } from 'node:http';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';
import { optionalEnv, requiredEnv } from '#shared/config';
import {
  type AwsCallSettings,
  bindDeadline,
  callConfig,
  FUNCTION_CALLS,
  LOCAL_CALLS,
  serviceClient,
} from './aws-clients.ts';
import { UNIX_SOCKET_ENDPOINT, UnixSocketAgent } from './unix-socket-agent.ts';

/**
 * The one DynamoDB client module: the AWS SDK's document client (plain JavaScript values in and
 * out, undefined attributes left out), on a DynamoDBClient set up by aws-clients.ts.
 */
export type DocumentClient = DynamoDBDocument;

/**
 * A document client with `settings` on a DynamoDBClient of `config` (endpoint, region,
 * credentials; by default the SDK's own resolution). The document client shares the service
 * client's middleware stack, so each call is traced and classified once.
 */
export const dynamoDbDocumentClient = (
  settings: AwsCallSettings,
  config: Pick<DynamoDBClientConfig, 'credentials' | 'endpoint' | 'region'> = {},
  httpAgent?: Agent,
): DocumentClient =>
  bindDeadline(
    DynamoDBDocument.from(
      serviceClient(new DynamoDBClient({ ...config, ...callConfig(settings, httpAgent) }), settings),
      {
        marshallOptions: { removeUndefinedValues: true },
      },
    ),
    settings,
  );

/**
 * A DynamoDB client for an operator's tool: the SDK's default credential chain (variables,
 * profiles, SSO) and region, unless handed in.
 */
export const regionalDocumentClient = (
  config: Pick<DynamoDBClientConfig, 'credentials' | 'region'> = {},
): DocumentClient => dynamoDbDocumentClient(FUNCTION_CALLS, config);

/**
 * DYNAMODB_SOCKET (the local service's table, on a Unix socket inside its data folder) or
 * DYNAMODB_ENDPOINT points the client at a local dynalite, with its fixed credentials.
 */
export const createDocumentClient = (
  endpoint = optionalEnv('DYNAMODB_ENDPOINT'),
  socket = optionalEnv('DYNAMODB_SOCKET'),
): DocumentClient =>
  endpoint || socket
    ? dynamoDbDocumentClient(
        LOCAL_CALLS,
        {
          endpoint: socket ? UNIX_SOCKET_ENDPOINT : endpoint,
          region: optionalEnv('AWS_REGION') ?? 'local',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        },
        socket ? new UnixSocketAgent(socket) : undefined,
      )
    : dynamoDbDocumentClient(FUNCTION_CALLS);

/** A conditional write that found the item otherwise than its condition asked. */
export const isConditionFailure = (error: unknown): boolean =>
  (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';

let shared: DocumentClient | undefined;
export const documentClient = (): DocumentClient => {
  shared ??= createDocumentClient();
  return shared;
};

export const tableName = (): string => requiredEnv('TABLE_NAME');
