// Which client address a connection or request comes from: the peer's own address, or, from a trusted proxy, the
// right-most address of X-Forwarded-For that is not a trusted proxy (as nginx's realip module with
// `real_ip_recursive on`, and Express's `trust proxy` with a list of addresses).
import { BlockList, isIP } from 'node:net';

/** The proxies whose X-Forwarded-For is believed. */
export interface TrustedProxies {
  /** Whether `address` (as a socket reports it) is one of them. */
  trusts(address: string): boolean;
  /**
   * The client behind a request that came from `peer` (a trusted proxy): walking X-Forwarded-For from the right,
   * the first hop that is not a trusted proxy; the left-most hop when all are; `peer` without the header.
   */
  clientOf(peer: string, forwardedFor: string | undefined): string;
}

/** What is kept of a hop that is not an address (it is only a counting key). */
const MAX_KEY = 100;

/** An address as one key: IPv4-mapped IPv6 as IPv4, lower case, without brackets or port. */
export function normalAddress(address: string): string {
  let a = address.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed !== null) a = bracketed[1] as string;
  else if (/^[\d.]+:\d+$/.test(a)) a = a.slice(0, a.indexOf(':'));
  if (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4) a = a.slice(7);
  return a.slice(0, MAX_KEY);
}

/** One entry of a trusted list: an address, or a range in CIDR notation (`10.0.0.0/8`, `fd00::/8`). */
function addEntry(list: BlockList, entry: string): string | undefined {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return `not an IP address or CIDR range: ${JSON.stringify(entry)}`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) {
    list.addAddress(address, type);
    return undefined;
  }
  const prefix = Number(bits);
  if (!/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128))
    return `bad prefix length in ${JSON.stringify(entry)}`;
  list.addSubnet(address, prefix, type);
  return undefined;
}

/** Reads a list of addresses and CIDR ranges; the reason names the first entry that is neither. */
export function parseTrustedProxies(
  entries: readonly string[],
): { ok: true; value: TrustedProxies } | { ok: false; reason: string } {
  const list = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const problem = addEntry(list, entry);
    if (problem !== undefined) return { ok: false, reason: problem };
  }
  const trusts = (address: string): boolean => {
    const a = normalAddress(address);
    const family = isIP(a);
    return family !== 0 && list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  };
  return {
    ok: true,
    value: {
      trusts,
      clientOf(peer, forwardedFor) {
        const hops = (forwardedFor ?? '').split(',').map(normalAddress).filter(Boolean);
        let client = normalAddress(peer);
        for (let i = hops.length - 1; i >= 0 && trusts(client); i -= 1) client = hops[i] as string;
        return client;
      },
    },
  };
}
