/**
 * JavaScript for a bench's child process (its `-e` module, before it imports a bundle): the two
 * response-streaming calls of `awslambda` as the Lambda Node.js runtime provides them, and
 * `invokeAsLambda`, which calls a handler as the runtime would: a streaming one with a response
 * stream (here a sink that counts the bytes), any other with the event and the context. A
 * streamed answer's status is read from its prelude.
 *
 * The calls repeat scripts/local/response-streaming.ts in plain JavaScript on purpose: importing
 * that TypeScript file makes Node load its type stripper, about 28 ms of every measured process
 * (function and floor alike), which would pull every cold-start ratio towards 1.
 */
export const LAMBDA_INVOKE = `
import { Writable } from 'node:stream';
const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
globalThis.awslambda ??= {};
globalThis.awslambda.streamifyResponse ??= (handler) => Object.assign(handler, { [STREAMING]: 'response' });
globalThis.awslambda.HttpResponseStream ??= {
  from: (stream, prelude) => {
    stream.write(JSON.stringify(prelude));
    stream.write(new Uint8Array(8));
    return stream;
  },
};
const invokeAsLambda = async (handler, event, context) => {
  if (handler[STREAMING] !== 'response') return handler(event, context);
  let prelude = '';
  let bytes = 0;
  const sink = new Writable({
    write(chunk, _encoding, done) {
      if (bytes === 0) prelude = Buffer.from(chunk).toString('utf8');
      bytes += chunk.length;
      done();
    },
  });
  await handler(event, sink, context);
  return { ...JSON.parse(prelude), streamedBytes: bytes };
};
`;
