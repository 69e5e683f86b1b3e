import http from 'node:http';
import https from 'node:https';
import aws4 from 'aws4';
import { optionalEnv } from '#shared/config';

/**
 * Calls to the AWS services this service uses. All five speak the AWS JSON protocol (a signed
 * POST naming the operation in X-Amz-Target), so one small client, signed by aws4 (SigV4) and
 * sent with Node's own https, does what the AWS SDK's generated clients do here, at a fraction of
 * their cold-start cost. Node's https rather than fetch: fetch's first call loads undici, about
 * 50 ms more on every cold start.
 */
export interface AwsJsonService {
  /** SigV4 signing name, also the endpoint's first label. */
  readonly signingName: string;
  readonly targetPrefix: string;
  readonly jsonVersion: '1.0' | '1.1';
}

export const DYNAMODB: AwsJsonService = {
  signingName: 'dynamodb',
  targetPrefix: 'DynamoDB_20120810',
  jsonVersion: '1.0',
};
export const KMS: AwsJsonService = { signingName: 'kms', targetPrefix: 'TrentService', jsonVersion: '1.1' };
export const STEP_FUNCTIONS: AwsJsonService = {
  signingName: 'states',
  targetPrefix: 'AWSStepFunctions',
  jsonVersion: '1.0',
};
export const EVENTBRIDGE: AwsJsonService = {
  signingName: 'events',
  targetPrefix: 'AWSEvents',
  jsonVersion: '1.1',
};
export const SECRETS_MANAGER: AwsJsonService = {
  signingName: 'secretsmanager',
  targetPrefix: 'secretsmanager',
  jsonVersion: '1.1',
};

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export type CredentialSource = () => Promise<AwsCredentials>;

/** Lambda hands its role's credentials to the function in these variables. */
export const credentialsFromEnvironment: CredentialSource = async () => {
  const accessKeyId = optionalEnv('AWS_ACCESS_KEY_ID');
  const secretAccessKey = optionalEnv('AWS_SECRET_ACCESS_KEY');
  if (accessKeyId === undefined || secretAccessKey === undefined)
    throw new Error('No AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set');
  const sessionToken = optionalEnv('AWS_SESSION_TOKEN');
  return { accessKeyId, secretAccessKey, ...(sessionToken !== undefined && { sessionToken }) };
};

/** An error answer of an AWS service: `name` is its error code (ConditionalCheckFailedException...). */
export class AwsServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly statusCode: number,
    readonly requestId: string | undefined,
    /** The body's other fields (DynamoDB's CancellationReasons or Item, for instance). */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = code;
  }
}

export const isAwsError = (error: unknown, code: string): error is AwsServiceError =>
  error instanceof AwsServiceError && error.code === code;

/** Codes the AWS SDKs treat as throttling: worth a retry after a pause. */
const THROTTLING_CODES = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'TransactionInProgressException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'LimitExceededException',
  'PriorRequestNotComplete',
]);

/** No answer came: the connection failed or the attempt ran out of time. */
export class AwsNetworkError extends Error {
  override name = 'AwsNetworkError';
}

const isRetryable = (error: unknown): boolean =>
  error instanceof AwsNetworkError ||
  (error instanceof AwsServiceError &&
    (error.statusCode >= 500 || error.statusCode === 429 || THROTTLING_CODES.has(error.code)));

export interface AwsJsonClientOptions {
  /** The service's endpoint; by default its regional endpoint. */
  readonly endpoint?: string;
  readonly region?: string;
  readonly credentials?: CredentialSource;
  /** Attempts per call, the first included. @default 3, as the AWS SDKs */
  readonly maxAttempts?: number;
  /** @default 3000 */
  readonly attemptTimeoutMs?: number;
  /** First backoff; each retry waits a random time up to this doubled per attempt. @default 50 */
  readonly backoffMs?: number;
  /** Where connections go (a Unix socket, locally); by default Node's global agents. */
  readonly agent?: http.Agent;
}

export type AwsJsonCall = <Output = Record<string, unknown>>(
  operation: string,
  input: Readonly<Record<string, unknown>>,
) => Promise<Output>;

const MAX_BACKOFF_MS = 5000;

const regionalEndpoint = (service: AwsJsonService, region: string): string =>
  `https://${service.signingName}.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`;

interface Answer {
  readonly statusCode: number;
  readonly header: (name: string) => string | undefined;
  readonly text: string;
}

const errorOf = (response: Answer): AwsServiceError => {
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(response.text) as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's or load balancer's page): the status says enough.
  }
  const { __type, message, Message, ...details } = body;
  // "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException" or "Code:http://..." in the header.
  const typeName = String(__type ?? response.header('x-amzn-errortype') ?? `HTTP${response.statusCode}`);
  const code = typeName.split('#').at(-1)?.split(':')[0] ?? typeName;
  return new AwsServiceError(
    code,
    String(message ?? Message ?? `${code} (HTTP ${response.statusCode})`),
    response.statusCode,
    response.header('x-amzn-requestid'),
    details,
  );
};

/** One POST; connections are kept alive by Node's global agents, or by the agent given. */
const post = (
  url: URL,
  headers: http.OutgoingHttpHeaders,
  body: string,
  timeoutMs: number,
  agent: http.Agent | undefined,
) =>
  new Promise<Answer>((resolve, reject) => {
    const send = url.protocol === 'http:' ? http.request : https.request;
    const request = send(url, { method: 'POST', headers, ...(agent && { agent }) }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => reject(new AwsNetworkError(error.message)));
      response.on('end', () =>
        resolve({
          statusCode: response.statusCode ?? 0,
          header: (name) => {
            const value = response.headers[name];
            return Array.isArray(value) ? value[0] : value;
          },
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', (error) => reject(new AwsNetworkError(`${url.host}: ${error.message}`)));
    request.end(body);
  });

/** Where the calls go, read at the first call: a function that never calls AWS needs no region. */
const destinationOf = (service: AwsJsonService, options: AwsJsonClientOptions) => {
  const region = options.region ?? optionalEnv('AWS_REGION') ?? optionalEnv('AWS_DEFAULT_REGION');
  if (region === undefined) throw new Error('No AWS region: AWS_REGION is not set');
  return { region, endpoint: new URL(options.endpoint ?? regionalEndpoint(service, region)) };
};

export const awsJsonClient = (service: AwsJsonService, options: AwsJsonClientOptions = {}): AwsJsonCall => {
  let destination: { region: string; endpoint: URL } | undefined;
  const credentials = options.credentials ?? credentialsFromEnvironment;
  const maxAttempts = options.maxAttempts ?? 3;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 3000;
  const backoffMs = options.backoffMs ?? 50;

  const attempt = async (operation: string, body: string): Promise<unknown> => {
    destination ??= destinationOf(service, options);
    const { region, endpoint } = destination;
    // Signed at each attempt: the signature carries its time and is refused 5 minutes later.
    const signed = aws4.sign(
      {
        host: endpoint.host,
        path: endpoint.pathname,
        method: 'POST',
        service: service.signingName,
        region,
        headers: {
          'content-type': `application/x-amz-json-${service.jsonVersion}`,
          'x-amz-target': `${service.targetPrefix}.${operation}`,
        },
        body,
      },
      await credentials(),
    );
    const response = await post(endpoint, signed.headers ?? {}, body, attemptTimeoutMs, options.agent);
    if (response.statusCode < 200 || response.statusCode > 299) throw errorOf(response);
    return response.text === '' ? {} : JSON.parse(response.text);
  };

  return async <Output>(operation: string, input: Readonly<Record<string, unknown>>): Promise<Output> => {
    const body = JSON.stringify(input);
    for (let attempts = 1; ; attempts++) {
      try {
        return (await attempt(operation, body)) as Output;
      } catch (error) {
        if (attempts >= maxAttempts || !isRetryable(error)) throw error;
        const ceiling = Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** attempts);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
      }
    }
  };
};
