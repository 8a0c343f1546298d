// DNS-rebinding protection: Host and Origin must name an allowed host.
export interface OriginPolicy {
  /** Host names (without port) accepted in Host and Origin; '*' disables the check. */
  allowedHosts: readonly string[];
}

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

/** Returns undefined when allowed, or the reason for a 403. */
export function checkOrigin(
  policy: OriginPolicy,
  host: string | undefined,
  origin: string | undefined,
): string | undefined {
  if (policy.allowedHosts.includes('*')) return undefined;
  if (host === undefined || !policy.allowedHosts.includes(hostName(host)))
    return 'Forbidden: Host not allowed';
  if (origin === undefined) return undefined;
  let originHost: string;
  try {
    originHost = new URL(origin).hostname.toLowerCase();
  } catch {
    return 'Forbidden: invalid Origin';
  }
  return policy.allowedHosts.includes(originHost) ? undefined : 'Forbidden: Origin not allowed';
}
