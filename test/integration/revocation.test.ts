import { describe, expect, it } from 'vitest';
import { callApi, requestToken } from './support/local-service.ts';
import { runScript } from './support/scripts.ts';
import { useLocalService } from './support/use-local-service.ts';

/**
 * Revoking a client's live tokens against the running local service: the authorizer reads the
 * client's record on every invocation it makes, and the gateway caches its answer per token, so a
 * disabled client (or one whose secret was rotated without grace) is refused within the cache
 * time. The cache is shortened here (LOCAL_AUTHORIZER_CACHE_SECONDS) so the test sees it end.
 */
const CACHE_SECONDS = 3;
/** What a slow, shared machine may add between the command's end and the next request's answer. */
const MARGIN_SECONDS = 3;

const service = useLocalService({ env: { LOCAL_AUTHORIZER_CACHE_SECONDS: String(CACHE_SECONDS) } });

const statusWith = async (token: string) =>
  callApi(service.baseUrl, '/v1/payments/credit-transfers/no-such-payment/status', { token });

/** Polls until the token is refused: the seconds it took, or fails after the cache time and margin. */
const secondsUntilRefused = async (token: string): Promise<number> => {
  const started = Date.now();
  for (;;) {
    const reply = await statusWith(token);
    const elapsed = (Date.now() - started) / 1000;
    if (reply.status === 401) {
      expect(reply.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
      expect(reply.body).toMatchObject({ status: 401, error_description: expect.any(String) });
      return elapsed;
    }
    expect(reply.status, 'a live token reaches the handler until refused').toBe(404);
    if (elapsed > CACHE_SECONDS + MARGIN_SECONDS) throw new Error(`still accepted after ${elapsed} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

const newClient = async (clientId: string): Promise<string> => {
  const created = await runScript(
    service,
    'clients',
    'create',
    '--client-id',
    clientId,
    '--scope',
    'transactions:read',
    '--tenant',
    'revocation',
  );
  expect(created.code, created.stderr).toBe(0);
  return /client_secret: (\S+)/.exec(created.stdout)?.[1] as string;
};

describe('revoking live tokens', () => {
  it('refuses the tokens of a disabled client within the cache time, with 401 invalid_token', async () => {
    const secret = await newClient('revoked-by-disable');
    const token = await requestToken(service.baseUrl, 'transactions:read', {
      clientId: 'revoked-by-disable',
      clientSecret: secret,
    });
    expect((await statusWith(token)).status).toBe(404);

    const disabled = await runScript(service, 'clients', 'disable', '--client-id', 'revoked-by-disable');
    expect(disabled.code, disabled.stderr).toBe(0);

    expect(await secondsUntilRefused(token)).toBeLessThanOrEqual(CACHE_SECONDS + MARGIN_SECONDS);
  }, 60_000);

  it('refuses the tokens issued before a rotation without grace, and accepts those issued after', async () => {
    const secret = await newClient('revoked-by-rotation');
    const client = { clientId: 'revoked-by-rotation', clientSecret: secret };
    const before = await requestToken(service.baseUrl, 'transactions:read', client);
    expect((await statusWith(before)).status).toBe(404);

    const rotated = await runScript(
      service,
      'clients',
      'rotate-secret',
      '--client-id',
      client.clientId,
      '--grace',
      '0',
    );
    expect(rotated.code, rotated.stderr).toBe(0);
    const newSecret = /client_secret: (\S+)/.exec(rotated.stdout)?.[1] as string;

    expect(await secondsUntilRefused(before)).toBeLessThanOrEqual(CACHE_SECONDS + MARGIN_SECONDS);
    const after = await requestToken(service.baseUrl, 'transactions:read', {
      ...client,
      clientSecret: newSecret,
    });
    expect((await statusWith(after)).status).toBe(404);
  }, 60_000);

  it('keeps the tokens of a client whose secret is rotated with grace', async () => {
    const secret = await newClient('kept-through-rotation');
    const token = await requestToken(service.baseUrl, 'transactions:read', {
      clientId: 'kept-through-rotation',
      clientSecret: secret,
    });

    const rotated = await runScript(
      service,
      'clients',
      'rotate-secret',
      '--client-id',
      'kept-through-rotation',
      '--grace',
      '1h',
    );
    expect(rotated.code, rotated.stderr).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, (CACHE_SECONDS + 1) * 1000));

    expect((await statusWith(token)).status).toBe(404);
  }, 60_000);
});
