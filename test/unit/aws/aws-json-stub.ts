import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for an AWS service on 127.0.0.1 that speaks the AWS JSON protocol (a POST naming
 * its operation in X-Amz-Target, application/x-amz-json-1.0 bodies, errors as `__type`) and
 * answers each request with the next scripted answer, so a test can inject faults.
 */
export interface StubRequest {
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
  readonly at: number;
}

export type Answer = (response: ServerResponse, request: StubRequest) => void | Promise<void>;

const JSON_1_0 = 'application/x-amz-json-1.0';

const send = (
  response: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
) => {
  response.writeHead(status, {
    'content-type': JSON_1_0,
    'x-amzn-requestid': randomUUID(),
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
};

/** A 2xx answer with this JSON body. */
export const ok =
  (body: Record<string, unknown> = {}): Answer =>
  (response) =>
    send(response, 200, JSON.stringify(body));

/** An AWS error answer: `__type` names it, as DynamoDB writes it. */
export const awsError =
  (type: string, message: string, status = 400, headers: Record<string, string> = {}): Answer =>
  (response) =>
    send(
      response,
      status,
      JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }),
      headers,
    );

/** A 200 whose body is not JSON, with a request id the caller can report. */
export const garbled =
  (requestId: string): Answer =>
  (response) =>
    send(response, 200, '{"Item": {"pk": {"S": "tru', { 'x-amzn-requestid': requestId });

/** A 200 whose headers come at once and whose body then arrives one byte every `intervalMs`. */
export const trickle =
  (body: string, intervalMs: number): Answer =>
  async (response) => {
    response.writeHead(200, { 'content-type': JSON_1_0, 'content-length': Buffer.byteLength(body) });
    response.flushHeaders();
    for (const byte of Buffer.from(body)) {
      if (response.destroyed) return;
      response.write(Buffer.from([byte]));
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
    response.end();
  };

/** No answer at all: the connection stays open and silent until the caller gives up on it. */
export const silence = (): Answer => () => {};

export interface AwsJsonStub {
  readonly endpoint: string;
  readonly requests: StubRequest[];
  /** Answers for the coming requests, in order; once used up, `fallback` answers. */
  script(...answers: Answer[]): void;
  /** Forgets the requests seen and the answers not yet given. */
  reset(): void;
  close(): Promise<void>;
}

export const startAwsJsonStub = async (fallback: Answer = ok()): Promise<AwsJsonStub> => {
  const requests: StubRequest[] = [];
  const answers: Answer[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const stubRequest: StubRequest = {
        target: String(request.headers['x-amz-target'] ?? ''),
        headers: request.headers,
        body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
        at: Date.now(),
      };
      requests.push(stubRequest);
      void (answers.shift() ?? fallback)(response, stubRequest);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    script: (...next) => answers.push(...next),
    reset: () => {
      requests.length = 0;
      answers.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
