import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { errors } from '../errors.js';

interface Policy {
  allowLoopback: boolean;
  allowPrivate: boolean;
  allowCidrs: string[];
}

const blockList = (ranges: Array<[string, number, 'ipv4' | 'ipv6']>) => {
  const list = new BlockList();
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family);
  return list;
};

/** Link-local and cloud metadata: refused whatever the configuration says. */
const ALWAYS_REFUSED = blockList([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
  ['fd00:ec2::254', 128, 'ipv6'],
  ['0.0.0.0', 8, 'ipv4'],
  ['::', 128, 'ipv6'],
]);
const LOOPBACK = blockList([
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);
const PRIVATE = blockList([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
]);

const familyOf = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** IPv6 forms that carry an IPv4 address in their last 32 bits: mapped, compatible and NAT64. */
const EMBEDDING = blockList([
  ['::ffff:0:0', 96, 'ipv6'],
  ['::', 96, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
]);

/** The IPv4 address an IPv6 address embeds (so `::ffff:169.254.169.254` is judged as 169.254.169.254). */
function unwrap(address: string): string {
  if (isIP(address) !== 6 || address === '::' || address === '::1' || !EMBEDDING.check(address, 'ipv6')) return address;
  const groups = new URL(`http://[${address}]/`).hostname.slice(1, -1).split(':');
  const high = Number.parseInt(groups.at(-2) || '0', 16);
  const low = Number.parseInt(groups.at(-1) || '0', 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Bound on remembered IP-literal custom hosts (callers choose them, so the map must not grow freely). */
const MAX_REMEMBERED_LITERALS = 1024;

/**
 * Decides which `x-gateway-custom-host` values a caller may use. The address rules are applied to
 * the literal IP, and for names to every address DNS returns, both when the request is checked and
 * again when the connection is opened (the `lookup` used by custom-host pools), so that a name
 * re-pointed between the two (DNS rebinding) still cannot reach a refused address.
 */
export class CustomHostGuard {
  private readonly allowed: BlockList;
  /**
   * Values already allowed whose host is an IP literal: their verdict depends on nothing but the
   * policy, so a virtual key's stored host (checked on every request) is parsed once.
   */
  private readonly allowedLiterals = new Map<string, string>();

  constructor(private readonly policy: Policy) {
    this.allowed = new BlockList();
    for (const cidr of policy.allowCidrs) {
      const [address, prefix] = cidr.split('/');
      this.allowed.addSubnet(address, Number(prefix ?? (isIP(address) === 6 ? 128 : 32)), familyOf(address));
    }
  }

  /** Why `address` is refused, or undefined when it is allowed. */
  refusal(address: string): string | undefined {
    const unmapped = unwrap(address);
    const family = familyOf(unmapped);
    if (ALWAYS_REFUSED.check(unmapped, family)) {
      return `link-local, unspecified and cloud metadata addresses are always refused (${unmapped})`;
    }
    if (LOOPBACK.check(unmapped, family)) {
      return this.policy.allowLoopback ? undefined : `loopback addresses are refused by this gateway's customHosts.allowLoopback setting (${unmapped})`;
    }
    if (PRIVATE.check(unmapped, family) && !this.policy.allowPrivate && !this.allowed.check(unmapped, family)) {
      return `private network addresses are refused unless allowed in customHosts (${unmapped})`;
    }
    return undefined;
  }

  /** Validates a custom host value; returns the normalised base URL (no trailing slash). Throws a 400. */
  async check(value: string): Promise<string> {
    const known = this.allowedLiterals.get(value);
    if (known !== undefined) return known;
    const refuse = (reason: string) =>
      errors.invalidRequest(`x-gateway-custom-host refused: ${reason}.`, {
        param: 'x-gateway-custom-host',
        code: 'custom_host_refused',
      });
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw refuse('it is not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`only http and https are allowed, not ${url.protocol}`);
    if (url.username || url.password) throw refuse('credentials in the URL are not allowed; send them as a Bearer token');
    if (url.search || url.hash) throw refuse('a base URL takes no query string or fragment');
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const addresses = isIP(host) ? [host] : await resolveAll(host).catch(() => {
      throw refuse(`the name ${host} does not resolve`);
    });
    for (const address of addresses) {
      const reason = this.refusal(address);
      if (reason) throw refuse(reason);
    }
    const normalised = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    if (isIP(host) && this.allowedLiterals.size < MAX_REMEMBERED_LITERALS) this.allowedLiterals.set(value, normalised);
    return normalised;
  }

  /** A `net.connect` lookup that refuses forbidden addresses at connect time. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4);
      const usable = addresses.filter((entry) => this.refusal(entry.address) === undefined);
      if (usable.length === 0) {
        return callback(Object.assign(new Error(`custom host ${hostname} resolves only to refused addresses`), { code: 'EREFUSEDHOST' }), '', 4);
      }
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0].address, usable[0].family);
    });
  };
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses.map((entry) => entry.address)))),
  );
}
