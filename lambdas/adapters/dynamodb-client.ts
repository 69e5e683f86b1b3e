import type {
  BatchGetCommandInput,
  BatchGetCommandOutput,
  BatchWriteCommandInput,
  BatchWriteCommandOutput,
  DeleteCommandInput,
  DeleteCommandOutput,
  GetCommandInput,
  GetCommandOutput,
  PutCommandInput,
  PutCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  ScanCommandInput,
  ScanCommandOutput,
  UpdateCommandInput,
  UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { optionalEnv, requiredEnv } from '#shared/config';
import { type AwsJsonCall, awsJsonClient, type CredentialSource, DYNAMODB, isAwsError } from './aws-json.ts';
import { UNIX_SOCKET_ENDPOINT, UnixSocketAgent } from './unix-socket-agent.ts';

/** An answer without the SDK's response metadata, which this client does not make. */
type Answer<T> = Omit<T, '$metadata'>;

/**
 * DynamoDB with plain JavaScript values, as the AWS SDK's document client takes and gives them
 * (its input and output types are borrowed, types only): the item operations this service uses.
 */
export interface DocumentClient {
  get(input: GetCommandInput): Promise<Answer<GetCommandOutput>>;
  put(input: PutCommandInput): Promise<Answer<PutCommandOutput>>;
  update(input: UpdateCommandInput): Promise<Answer<UpdateCommandOutput>>;
  delete(input: DeleteCommandInput): Promise<Answer<DeleteCommandOutput>>;
  query(input: QueryCommandInput): Promise<Answer<QueryCommandOutput>>;
  scan(input: ScanCommandInput): Promise<Answer<ScanCommandOutput>>;
  batchGet(input: BatchGetCommandInput): Promise<Answer<BatchGetCommandOutput>>;
  batchWrite(input: BatchWriteCommandInput): Promise<Answer<BatchWriteCommandOutput>>;
  /** The raw call, in DynamoDB's own attribute-value JSON (table administration, local runtime). */
  readonly call: AwsJsonCall;
}

type Item = Record<string, unknown>;
type Marshalled = Parameters<typeof unmarshall>[0];

const toAttributes = (item: Item | undefined): Marshalled | undefined =>
  item === undefined ? undefined : (marshall(item, { removeUndefinedValues: true }) as Marshalled);
const fromAttributes = (attributes: Marshalled | undefined): Item | undefined =>
  attributes === undefined ? undefined : unmarshall(attributes);

/** The parts of a request that hold attribute values; the rest is sent as it is. */
const withAttributes = <T extends object>(input: T): Item => {
  const { Key, Item, ExpressionAttributeValues, ExclusiveStartKey, ...rest } = input as Item;
  return {
    ...rest,
    ...(Key !== undefined && { Key: toAttributes(Key as Item) }),
    ...(Item !== undefined && { Item: toAttributes(Item as Item) }),
    ...(ExpressionAttributeValues !== undefined && {
      ExpressionAttributeValues: toAttributes(ExpressionAttributeValues as Item),
    }),
    ...(ExclusiveStartKey !== undefined && { ExclusiveStartKey: toAttributes(ExclusiveStartKey as Item) }),
  };
};

const withValues = <T>(output: Item): T => {
  const { Item, Attributes, Items, LastEvaluatedKey, ...rest } = output as Record<
    string,
    Marshalled | undefined
  >;
  return {
    ...rest,
    ...(Item !== undefined && { Item: fromAttributes(Item) }),
    ...(Attributes !== undefined && { Attributes: fromAttributes(Attributes) }),
    ...(Items !== undefined && { Items: (Items as unknown as Marshalled[]).map((item) => unmarshall(item)) }),
    ...(LastEvaluatedKey !== undefined && { LastEvaluatedKey: fromAttributes(LastEvaluatedKey) }),
  } as T;
};

const mapTables = <From, To>(
  tables: Record<string, From> | undefined,
  map: (value: From) => To,
): Record<string, To> | undefined =>
  tables === undefined
    ? undefined
    : Object.fromEntries(Object.entries(tables).map(([name, value]) => [name, map(value)]));

export const documentClientOf = (call: AwsJsonCall): DocumentClient => {
  const item =
    <I extends object, O>(operation: string) =>
    async (input: I): Promise<O> =>
      withValues<O>(await call(operation, withAttributes(input)));
  return {
    call,
    get: item('GetItem'),
    put: item('PutItem'),
    update: item('UpdateItem'),
    delete: item('DeleteItem'),
    query: item('Query'),
    scan: item('Scan'),
    batchGet: async ({ RequestItems, ...rest }) => {
      type KeysAndAttributes = { Keys?: Item[] } & Item;
      const marshalledRequests = mapTables(RequestItems as Record<string, KeysAndAttributes>, (request) => ({
        ...request,
        Keys: request.Keys?.map((key) => toAttributes(key)),
      }));
      const { Responses, UnprocessedKeys, ...output } = await call<{
        Responses?: Record<string, Marshalled[]>;
        UnprocessedKeys?: Record<string, { Keys?: Marshalled[] } & Item>;
      }>('BatchGetItem', { ...rest, RequestItems: marshalledRequests });
      return {
        ...output,
        Responses: mapTables(Responses, (items) => items.map((entry) => unmarshall(entry))),
        UnprocessedKeys: mapTables(UnprocessedKeys, (request) => ({
          ...request,
          Keys: request.Keys?.map((key) => unmarshall(key)),
        })),
      } as Answer<BatchGetCommandOutput>;
    },
    batchWrite: async ({ RequestItems, ...rest }) => {
      type WriteRequest = { PutRequest?: { Item?: Item }; DeleteRequest?: { Key?: Item } };
      const marshalledWrites = (requests: WriteRequest[]) =>
        requests.map(({ PutRequest, DeleteRequest }) => ({
          ...(PutRequest && { PutRequest: { Item: toAttributes(PutRequest.Item) } }),
          ...(DeleteRequest && { DeleteRequest: { Key: toAttributes(DeleteRequest.Key) } }),
        }));
      const { UnprocessedItems, ...output } = await call<{
        UnprocessedItems?: Record<
          string,
          { PutRequest?: { Item: Marshalled }; DeleteRequest?: { Key: Marshalled } }[]
        >;
      }>('BatchWriteItem', {
        ...rest,
        RequestItems: mapTables(RequestItems as Record<string, WriteRequest[]>, marshalledWrites),
      });
      return {
        ...output,
        UnprocessedItems: mapTables(UnprocessedItems, (requests) =>
          requests.map(({ PutRequest, DeleteRequest }) => ({
            ...(PutRequest && { PutRequest: { Item: unmarshall(PutRequest.Item) } }),
            ...(DeleteRequest && { DeleteRequest: { Key: unmarshall(DeleteRequest.Key) } }),
          })),
        ),
      } as Answer<BatchWriteCommandOutput>;
    },
  };
};

/** A conditional write that found the item otherwise than its condition asked. */
export const isConditionFailure = (error: unknown): boolean =>
  isAwsError(error, 'ConditionalCheckFailedException');

/** The regional endpoint, with the function's credentials or those an operator's tool hands in. */
export const regionalDocumentClient = (aws: { credentials?: CredentialSource; region?: string } = {}) =>
  documentClientOf(awsJsonClient(DYNAMODB, aws));

/**
 * DYNAMODB_SOCKET (the local service's table, on a Unix socket) or DYNAMODB_ENDPOINT points the
 * client at a local dynalite, with its fixed credentials.
 */
export const createDocumentClient = (
  endpoint = optionalEnv('DYNAMODB_ENDPOINT'),
  socket = optionalEnv('DYNAMODB_SOCKET'),
): DocumentClient =>
  documentClientOf(
    endpoint || socket
      ? awsJsonClient(DYNAMODB, {
          endpoint: socket ? UNIX_SOCKET_ENDPOINT : endpoint,
          ...(socket && { agent: new UnixSocketAgent(socket) }),
          region: optionalEnv('AWS_REGION') ?? 'local',
          credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }),
          maxAttempts: 5,
          // A loaded local table answers slowly; an attempt given up on may still have been written.
          attemptTimeoutMs: 30_000,
        })
      : awsJsonClient(DYNAMODB),
  );

let shared: DocumentClient | undefined;
export const documentClient = (): DocumentClient => {
  shared ??= createDocumentClient();
  return shared;
};

export const tableName = (): string => requiredEnv('TABLE_NAME');
