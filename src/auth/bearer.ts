// Reads a bearer token from the Authorization header (RFC 6750).
import type { HeaderLookup } from '../wire/headers.js';

export function bearerToken(header: HeaderLookup): string | undefined {
  const value = header('authorization');
  if (value === undefined) return undefined;
  const m = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i.exec(value);
  return m === null ? undefined : m[1];
}

/** A WWW-Authenticate challenge; error is set when a token was presented but refused. */
export function challenge(params: {
  resourceMetadata?: string;
  error?: 'invalid_token';
  description?: string;
}): string {
  const parts = ['realm="mcp"'];
  if (params.resourceMetadata !== undefined) parts.push(`resource_metadata="${params.resourceMetadata}"`);
  if (params.error !== undefined) parts.push(`error="${params.error}"`);
  if (params.description !== undefined)
    parts.push(`error_description="${params.description.replace(/["\\]/g, '')}"`);
  return `Bearer ${parts.join(', ')}`;
}
