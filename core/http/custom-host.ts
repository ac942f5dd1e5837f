import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
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

/*
 * The address policy follows IANA's special-purpose address registries, read 2026-11:
 * iana-ipv4-special-registry, iana-ipv6-special-registry and the multicast registries
 * (multicast-addresses, ipv6-multicast-addresses). Every range they list that is not globally
 * reachable is refused, except loopback and private use, which the configuration may open.
 * Forms that embed an IPv4 address are judged by that address (see EMBEDDING).
 */

/** Refused whatever the configuration says: link-local, metadata, unspecified, and every special-purpose range that is neither loopback nor private use. */
const ALWAYS_REFUSED = blockList([
  ['0.0.0.0', 8, 'ipv4'], // "this network", RFC 791 §3.2
  ['169.254.0.0', 16, 'ipv4'], // link local, RFC 3927 (cloud metadata: 169.254.169.254)
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments, RFC 6890 §2.1 (DS-Lite 192.0.0.0/29, RFC 7335)
  ['192.0.2.0', 24, 'ipv4'], // documentation TEST-NET-1, RFC 5737
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast, RFC 7526 (deprecated)
  ['198.18.0.0', 15, 'ipv4'], // benchmarking, RFC 2544
  ['198.51.100.0', 24, 'ipv4'], // documentation TEST-NET-2, RFC 5737
  ['203.0.113.0', 24, 'ipv4'], // documentation TEST-NET-3, RFC 5737
  ['224.0.0.0', 4, 'ipv4'], // multicast, RFC 5771
  ['240.0.0.0', 4, 'ipv4'], // reserved, RFC 1112 §4 (includes 255.255.255.255)
  ['255.255.255.255', 32, 'ipv4'], // limited broadcast, RFC 8190 / RFC 919 §7
  ['::', 128, 'ipv6'], // unspecified, RFC 4291
  ['100::', 64, 'ipv6'], // discard-only, RFC 6666
  ['2001::', 23, 'ipv6'], // IETF protocol assignments, RFC 2928 (Teredo 2001::/32, RFC 4380; benchmarking 2001:2::/48, RFC 5180; ORCHID, RFC 4843 / 7343)
  ['2001:db8::', 32, 'ipv6'], // documentation, RFC 3849
  ['3fff::', 20, 'ipv6'], // documentation, RFC 9637
  ['5f00::', 16, 'ipv6'], // segment routing (SRv6) SIDs, RFC 9602
  ['fe80::', 10, 'ipv6'], // link-local unicast, RFC 4291
  ['fec0::', 10, 'ipv6'], // site-local unicast, RFC 3879 (deprecated)
  ['ff00::', 8, 'ipv6'], // multicast, RFC 4291
  ['fd00:ec2::254', 128, 'ipv6'], // AWS instance metadata over IPv6 (inside fc00::/7, refused even when private is allowed)
]);
const LOOPBACK = blockList([
  ['127.0.0.0', 8, 'ipv4'], // RFC 1122 §3.2.1.3
  ['::1', 128, 'ipv6'], // RFC 4291
]);
const PRIVATE = blockList([
  ['10.0.0.0', 8, 'ipv4'], // private use, RFC 1918
  ['172.16.0.0', 12, 'ipv4'], // private use, RFC 1918
  ['192.168.0.0', 16, 'ipv4'], // private use, RFC 1918
  ['100.64.0.0', 10, 'ipv4'], // shared address space, RFC 6598
  ['64:ff9b:1::', 48, 'ipv6'], // IPv4/IPv6 translation, local use, RFC 8215
  ['fc00::', 7, 'ipv6'], // unique local, RFC 4193
]);

const familyOf = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/**
 * IPv6 forms that carry an IPv4 address, with where: IPv4-mapped (::ffff:0:0/96, RFC 4291),
 * IPv4-translated (::ffff:0:0:0/96, SIIT, RFC 2765), IPv4-compatible (::/96, RFC 4291,
 * deprecated), NAT64 (64:ff9b::/96, RFC 6052), all in the last 32 bits; 6to4 (2002::/16,
 * RFC 3056) in bits 16-47.
 */
const EMBEDDING: ReadonlyArray<{ list: BlockList; firstGroup: number }> = [
  { list: blockList([['::ffff:0:0', 96, 'ipv6'], ['::ffff:0:0:0', 96, 'ipv6'], ['::', 96, 'ipv6'], ['64:ff9b::', 96, 'ipv6']]), firstGroup: 6 },
  { list: blockList([['2002::', 16, 'ipv6']]), firstGroup: 1 },
];

/** The eight 16-bit groups of an IPv6 address (any textual form, dotted-quad tail included). */
function ipv6Groups(address: string): number[] {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.includes('::') ? canonical.split('::') : [canonical, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const front = parse(head);
  const back = parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** The IPv4 address an IPv6 address embeds (so `::ffff:169.254.169.254` and `2002:a9fe:a9fe::` are judged as 169.254.169.254). */
function unwrap(address: string): string {
  if (isIP(address) !== 6 || address === '::' || address === '::1') return address;
  const form = EMBEDDING.find(({ list }) => list.check(address, 'ipv6'));
  if (form === undefined) return address;
  const groups = ipv6Groups(address);
  const high = groups[form.firstGroup];
  const low = groups[form.firstGroup + 1];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Resolves a name to all its addresses (`dns.lookup` with `all: true` by default; tests inject their own). */
export type AddressLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemLookup: AddressLookup = (hostname, options, callback) => dnsLookup(hostname, { ...options, all: true }, callback);

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

  constructor(
    private readonly policy: Policy,
    private readonly resolve: AddressLookup = systemLookup,
  ) {
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
      return `link-local, unspecified, cloud metadata and other special-purpose addresses (IANA registries) are always refused (${unmapped})`;
    }
    if (LOOPBACK.check(unmapped, family)) {
      return this.policy.allowLoopback ? undefined : `loopback addresses are refused by this gateway's customHosts.allowLoopback setting (${unmapped})`;
    }
    if (PRIVATE.check(unmapped, family) && !this.policy.allowPrivate && !this.allowed.check(unmapped, family)) {
      return `private network addresses are refused unless gateway.config.ts allows them with customHosts.allowPrivate or customHosts.allowCidrs (${unmapped})`;
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
    const addresses = isIP(host) ? [host] : await this.resolveAll(host).catch(() => {
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

  private resolveAll(host: string): Promise<string[]> {
    return new Promise((resolve, reject) =>
      this.resolve(host, {}, (error, addresses) => (error ? reject(error) : resolve(addresses.map((entry) => entry.address)))),
    );
  }

  /** A `net.connect` lookup that refuses forbidden addresses at connect time. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname, options, (error, addresses) => {
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
