import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AwsJsonStub, ok, startAwsJsonStub } from '../aws/aws-json-stub.ts';

/**
 * The cursor key as a list function finds it on AWS: LIST_CURSOR_KEY_ID names a KMS HMAC key,
 * and the SDK's KMS client asks a stub that speaks KMS's protocol.
 */
const MAC = Buffer.alloc(32, 7);
let stub: AwsJsonStub;

beforeAll(async () => {
  stub = await startAwsJsonStub(ok({ Mac: MAC.toString('base64'), KeyId: 'alias/cursor' }));
});
afterAll(() => stub.close());
afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('cursor key from the environment', () => {
  it('derives it through KMS when LIST_CURSOR_KEY_ID is set, once per container', async () => {
    vi.stubEnv('LIST_CURSOR_KEY_ID', 'alias/cursor');
    vi.stubEnv('LIST_CURSOR_SECRET', '');
    vi.stubEnv('AWS_ENDPOINT_URL_KMS', stub.endpoint);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    const { cursorKeyFromEnvironment } = await import('#adapters/commons/cursor-key');

    const key = cursorKeyFromEnvironment();
    expect(Buffer.from(await key())).toEqual(MAC);
    expect(Buffer.from(await cursorKeyFromEnvironment()())).toEqual(MAC);
    expect(stub.requests.map((request) => request.target)).toEqual(['TrentService.GenerateMac']);
    expect(stub.requests[0]?.body).toMatchObject({ KeyId: 'alias/cursor', MacAlgorithm: 'HMAC_SHA_256' });
  });
});
