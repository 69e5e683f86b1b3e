/** A scripted fetch: records every request and answers from a queue or a function. */
export interface RecordedRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string | undefined;
}

export type Answer = Response | Error | ((request: RecordedRequest) => Response | Error);

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

export const tokenAnswer = (token: string, expiresIn = 3600) =>
  json(200, { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope: 'transactions:read' });

export const fakeFetch = (route: (request: RecordedRequest) => Answer | undefined) => {
  const requests: RecordedRequest[] = [];
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const request: RecordedRequest = {
      url: String(input instanceof Request ? input.url : input),
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      body:
        init.body === undefined || init.body === null
          ? undefined
          : typeof init.body === 'string'
            ? init.body
            : new TextDecoder().decode(init.body as ArrayBuffer),
    };
    requests.push(request);
    init.signal?.throwIfAborted();
    let answer = route(request);
    if (typeof answer === 'function') answer = answer(request);
    if (answer === undefined) throw new Error(`unexpected request ${request.method} ${request.url}`);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
};

/** A queue per path: each request takes the next answer; the last one repeats. */
export const queued = (answers: Record<string, Answer[]>) => (request: RecordedRequest) => {
  const path = new URL(request.url).pathname;
  const queue = answers[path];
  if (queue === undefined || queue.length === 0) return undefined;
  const answer = queue.length > 1 ? queue.shift() : queue[0];
  // A Response body can be read once: repeat a copy of the last one.
  return answer instanceof Response ? answer.clone() : answer;
};
