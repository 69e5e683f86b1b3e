import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '#domain/commons/errors';
import { checkWebhookUrl, type HostResolver, isPublicAddress } from '#domain/webhooks/webhook-url';

/** A resolver that answers from a table: no network. */
const resolverOf =
  (table: Record<string, string[]>): HostResolver =>
  async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses;
  };

const STRICT = { allowLocalReceivers: false };
const LOCAL = { allowLocalReceivers: true };
const publicResolver = resolverOf({
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
});

const refusal = async (url: string, resolve: HostResolver = publicResolver, policy = STRICT) => {
  try {
    await checkWebhookUrl(url, policy, resolve);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    const params = (error as InvalidRequestError).invalidParams;
    expect(params[0]?.name).toBe('url');
    return params[0]?.reason;
  }
  return undefined;
};

describe('webhook URL check', () => {
  it('accepts https with a host that resolves only to public addresses', async () => {
    const url = await checkWebhookUrl('https://hooks.example.com/payments?x=1', STRICT, publicResolver);
    expect(url.href).toBe('https://hooks.example.com/payments?x=1');
    await expect(
      checkWebhookUrl('https://93.184.216.34:8443/h', STRICT, publicResolver),
    ).resolves.toBeDefined();
    await expect(
      checkWebhookUrl('https://[2606:4700::1111]/h', STRICT, publicResolver),
    ).resolves.toBeDefined();
  });

  it.each([
    ['http://hooks.example.com/h', 'must use https'],
    ['ftp://hooks.example.com/h', 'must use https'],
    ['javascript:alert(1)', 'must use https'],
    ['not a url', 'is not an absolute URL'],
    ['https://user:secret@hooks.example.com/h', 'must not carry credentials'],
    ['https://user@hooks.example.com/h', 'must not carry credentials'],
  ])('refuses %s', async (url, reason) => {
    expect(await refusal(url)).toBe(reason);
  });

  it.each([
    // IPv4: loopback, private, link-local (instance metadata), CGNAT, unspecified, broadcast,
    // multicast, documentation, benchmarking, reserved, and the WHATWG-normalised spellings of loopback.
    '127.0.0.1',
    '127.255.255.254',
    '0x7f.1',
    '2130706433',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.254',
    '0.0.0.0',
    '255.255.255.255',
    '224.0.0.1',
    '192.0.2.10',
    '198.18.0.1',
    '240.0.0.1',
    // IPv6: loopback, unspecified, unique-local, link-local, multicast, documentation, mapped and
    // NAT64/6to4/Teredo forms of inner IPv4, IPv4-compatible, and anything outside 2000::/3.
    '[::1]',
    '[::]',
    '[fc00::1]',
    '[fd12:3456::1]',
    '[fe80::1]',
    '[ff02::1]',
    '[2001:db8::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:10.0.0.1]',
    '[::ffff:169.254.169.254]',
    '[::ffff:7f00:1]',
    '[64:ff9b::a00:1]',
    '[2002:a00:1::]',
    '[2001::1]',
    '[::127.0.0.1]',
    '[100::1]',
  ])('refuses the address %s', async (host) => {
    expect(await refusal(`https://${host}/h`)).toBe('must name a public address');
  });

  it.each([
    ['loopback', ['127.0.0.1']],
    ['private', ['10.1.2.3']],
    ['the instance metadata address', ['169.254.169.254']],
    ['carrier-grade NAT', ['100.64.1.1']],
    ['unique-local', ['fd00::5']],
    ['a mapped loopback', ['::ffff:127.0.0.1']],
    ['one private address among public ones', ['93.184.216.34', '192.168.0.7']],
  ])('refuses a host name that resolves to %s', async (_case, addresses) => {
    const resolve = resolverOf({ 'inner.example.com': addresses });
    expect(await refusal('https://inner.example.com/h', resolve)).toBe(
      'has a host name that resolves to an address that is not public',
    );
  });

  it('refuses a host name that does not resolve, or resolves to nothing', async () => {
    expect(await refusal('https://nowhere.example.com/h')).toBe('has a host name that does not resolve');
    expect(await refusal('https://empty.example.com/h', resolverOf({ 'empty.example.com': [] }))).toBe(
      'has a host name that does not resolve',
    );
  });

  it('refuses localhost and 127.0.0.1 unless the local runtime allows its own receivers', async () => {
    const resolve = resolverOf({ localhost: ['127.0.0.1', '::1'] });
    expect(await refusal('http://127.0.0.1:4000/h', resolve)).toBe('must use https');
    expect(await refusal('https://localhost:4000/h', resolve)).toBe(
      'has a host name that resolves to an address that is not public',
    );
    await expect(checkWebhookUrl('http://127.0.0.1:4000/h', LOCAL, resolve)).resolves.toBeDefined();
    await expect(checkWebhookUrl('http://localhost:4000/h', LOCAL, resolve)).resolves.toBeDefined();
  });

  it('keeps the local exception narrow: no other loopback, no private address, no credentials, a port', async () => {
    const resolve = resolverOf({ localhost: ['127.0.0.1'] });
    expect(await refusal('http://127.0.0.2:4000/h', resolve, LOCAL)).toBe('must use https');
    expect(await refusal('http://10.0.0.1:4000/h', resolve, LOCAL)).toBe('must use https');
    expect(await refusal('https://[::1]:4000/h', resolve, LOCAL)).toBe('must name a public address');
    expect(await refusal('http://user:pw@127.0.0.1:4000/h', resolve, LOCAL)).toBe(
      'must not carry credentials',
    );
    expect(await refusal('http://localhost/h', resolve, LOCAL)).toBe('must use https');
  });

  it('judges addresses as public only when they are global unicast', () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isPublicAddress('2a00:1450:4001:80b::200e')).toBe(true);
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
    expect(isPublicAddress('169.254.169.254')).toBe(false);
    expect(isPublicAddress('not-an-address')).toBe(false);
  });
});
