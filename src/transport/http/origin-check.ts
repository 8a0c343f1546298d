// DNS-rebinding protection: Host and Origin must name an allowed host.
import { isIP } from 'node:net';

export interface OriginPolicy {
  /** Host names (without port) accepted in Host and Origin; '*' disables the check. */
  allowedHosts: readonly string[];
  /**
   * Also accept a Host or Origin that is an IP address (IPv4, or IPv6 in brackets), with any port (default false).
   * DNS rebinding works through a name the attacker controls, so it cannot send one: this is for listeners that
   * probes and scrapers reach by address (Kubernetes probes and Prometheus send the pod's IP and port).
   */
  ipLiterals?: boolean;
  /** The setting a refusal points to (default `--allowed-hosts`). */
  setting?: string;
  /**
   * Told of each refused request: which header, the value as sent (at most 100 characters) and the reason. A
   * balancer that rewrites Host to its upstream's name is the usual cause: the operator's log should say so.
   */
  onRefused?: (refusal: OriginRefusal) => void;
}

export interface OriginRefusal {
  header: 'host' | 'origin';
  value: string | undefined;
  reason: string;
}

/** A client-sent value as a refusal names it: bounded, and quoted as JSON. */
const shown = (value: string): string =>
  JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);

export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]', '::1'];

function hostName(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end === -1 ? value : value.slice(0, end + 1);
  }
  const colon = value.indexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

/** Whether a host name (as `hostName` or `URL.hostname` gives it) is an IP address: IPv4, or IPv6 in brackets. */
export function isIpLiteral(name: string): boolean {
  if (name.startsWith('[')) return name.endsWith(']') && isIP(name.slice(1, -1)) === 6;
  return isIP(name) === 4;
}

/** Whether the policy accepts a host name (as `hostName` or `URL.hostname` gives it). */
const allows = (policy: OriginPolicy, name: string): boolean =>
  policy.allowedHosts.includes(name) || (policy.ipLiterals === true && isIpLiteral(name));

/** A refusal: told to the policy's listener, and its reason returned. */
function refusal(
  policy: OriginPolicy,
  header: 'host' | 'origin',
  value: string | undefined,
  reason: string,
): string {
  policy.onRefused?.({ header, value: value?.slice(0, 100), reason });
  return reason;
}

/** Where a refusal points to. */
const see = (policy: OriginPolicy): string => `(see ${policy.setting ?? '--allowed-hosts'})`;

/** Returns undefined when allowed, or the reason for a 403, naming the value refused. */
export function checkOrigin(
  policy: OriginPolicy,
  host: string | undefined,
  origin: string | undefined,
): string | undefined {
  if (policy.allowedHosts.includes('*')) return undefined;
  if (host === undefined) return refusal(policy, 'host', host, 'Forbidden: no Host header');
  const name = hostName(host);
  if (!allows(policy, name))
    return refusal(policy, 'host', host, `Forbidden: Host ${shown(name)} is not allowed ${see(policy)}`);
  if (origin === undefined) return undefined;
  let originHost: string;
  try {
    originHost = new URL(origin).hostname.toLowerCase();
  } catch {
    return refusal(policy, 'origin', origin, `Forbidden: invalid Origin ${shown(origin)}`);
  }
  return allows(policy, originHost)
    ? undefined
    : refusal(
        policy,
        'origin',
        origin,
        `Forbidden: Origin ${shown(originHost)} is not allowed ${see(policy)}`,
      );
}
