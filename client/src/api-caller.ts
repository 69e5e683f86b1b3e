import type { Client } from 'openapi-fetch';
import type { paths } from './api-types.ts';
import type { CallOptions } from './client.ts';
import { requestIdOf } from './errors.ts';
import type { Repeat } from './retry.ts';
import type { ResponseInfo } from './types.ts';

/** An openapi-fetch answer: the body or the error body, and the response. */
export interface ResultShape<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** What the client hands its groups of calls (webhooks, events): the typed API, authorized and retried. */
export interface ApiCaller {
  api: Client<paths>;
  /** The request options of one call: its signal, and the fetch that authorizes and retries it. */
  init(
    options: CallOptions,
    repeat?: Repeat,
  ): { signal?: AbortSignal; fetch: (request: Request) => Promise<Response> };
  /** The body of a 2xx; any other answer throws ApiError. */
  unwrap<T>(result: ResultShape<T>): T;
}

/** `requestId` and `replayed`, from an answer's headers. */
export const responseInfo = (response: Response): ResponseInfo => ({
  requestId: requestIdOf(response),
  replayed: response.headers.get('Idempotent-Replayed') === 'true',
});
