import ipaddr from 'ipaddr.js';
import { InvalidRequestError } from '../commons/errors.ts';

/**
 * Where a webhook may be sent: an https URL whose host is, and resolves only to, public unicast
 * addresses. The same address check runs again on the address each delivery connects to, so a
 * name that resolved to a public address at registration cannot be pointed inward later.
 */

export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** Every address a host name resolves to; throws when it resolves to none. */
export type HostResolver = (hostname: string) => Promise<string[]>;

export interface WebhookUrlPolicy {
  /**
   * The local runtime only: http(s)://127.0.0.1:PORT/... and http(s)://localhost:PORT/... are
   * accepted, for a developer's own receiver. Never set on AWS.
   */
  allowLocalReceivers: boolean;
}

/** IPv6 global unicast (RFC 4291 2.4): anything outside it is reserved or not for the internet. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * True for an address a webhook may reach: unicast and public. Loopback, private (RFC 1918),
 * link-local (the instance metadata address 169.254.169.254 among them), carrier-grade NAT,
 * unique-local, multicast, documentation, benchmarking and every other special range are refused,
 * in IPv4 and IPv6; an IPv4-mapped IPv6 address is judged as the IPv4 address it carries, and
 * IPv6 forms that embed IPv4 otherwise (NAT64, 6to4, Teredo) are refused.
 */
export const isPublicAddress = (address: string): boolean => {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.range() !== 'unicast') return false;
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
};

const LOCAL_RECEIVER_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost']);

/** The local runtime's exception: a receiver on this machine, named as 127.0.0.1 or localhost, with a port. */
export const isLocalReceiver = (url: URL, policy: WebhookUrlPolicy): boolean =>
  policy.allowLocalReceivers &&
  (url.protocol === 'http:' || url.protocol === 'https:') &&
  LOCAL_RECEIVER_HOSTS.has(url.hostname) &&
  url.port !== '';

const refused = (reason: string) =>
  new InvalidRequestError('The webhook URL is not allowed', [{ name: 'url', reason }]);

/** The host of a URL as an address when it is one (WHATWG URL brackets IPv6 and normalises IPv4). */
export const literalAddressOf = (hostname: string): string | undefined => {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) ? bare : undefined;
};

/**
 * Checks a webhook URL as registered: answers the parsed URL, or throws a 400 naming `url` with
 * the reason. A host name is resolved, and every address it resolves to must be public.
 */
export const checkWebhookUrl = async (
  text: string,
  policy: WebhookUrlPolicy,
  resolve: HostResolver,
): Promise<URL> => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refused('is not an absolute URL');
  }
  if (url.username !== '' || url.password !== '') throw refused('must not carry credentials');
  if (isLocalReceiver(url, policy)) return url;
  if (url.protocol !== 'https:') throw refused('must use https');
  const literal = literalAddressOf(url.hostname);
  if (literal !== undefined) {
    if (!isPublicAddress(literal)) throw refused('must name a public address');
    return url;
  }
  let addresses: string[];
  try {
    addresses = await resolve(url.hostname);
  } catch {
    throw refused('has a host name that does not resolve');
  }
  if (addresses.length === 0) throw refused('has a host name that does not resolve');
  if (!addresses.every(isPublicAddress)) {
    throw refused('has a host name that resolves to an address that is not public');
  }
  return url;
};
