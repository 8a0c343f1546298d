// Reads the Bearer challenge of a `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1): its error, scope and
// resource_metadata parameters.

export interface BearerChallenge {
  error?: string;
  scope?: string;
  resourceMetadata?: string;
}

/** The auth-params of the first Bearer challenge in a `WWW-Authenticate` value (none: an empty object). */
export function parseBearerChallenge(header: string | null): BearerChallenge {
  if (header === null) return {};
  const start = /(?:^|,)\s*Bearer(?:\s+|$)/i.exec(header);
  if (start === null) return {};
  const params: Record<string, string> = {};
  const re = /\s*([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)/y;
  re.lastIndex = start.index + start[0].length;
  for (let m = re.exec(header); m !== null; m = re.exec(header)) {
    const name = (m[1] as string).toLowerCase();
    params[name] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
    if (re.lastIndex >= header.length) break;
  }
  const out: BearerChallenge = {};
  if (params.error !== undefined) out.error = params.error;
  if (params.scope !== undefined && params.scope.trim() !== '') out.scope = params.scope.trim();
  if (params.resource_metadata !== undefined) out.resourceMetadata = params.resource_metadata;
  return out;
}

/** A response the sign-in should answer: a 401, or a 403 whose challenge says `insufficient_scope`. */
export function isAuthChallenge(res: Response): boolean {
  if (res.status === 401) return true;
  if (res.status !== 403) return false;
  return parseBearerChallenge(res.headers.get('www-authenticate')).error === 'insufficient_scope';
}
