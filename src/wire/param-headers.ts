// `Mcp-Param-{Name}` headers mirroring tool arguments whose schema property carries `x-mcp-header`.
import { decodeHeaderValue, type HeaderLookup } from './headers.js';
import { isJsonObject } from './jsonrpc.js';
import { headerMismatch, type ProtocolError } from './protocol-error.js';

export interface ParamHeader {
  /** Header name without the `Mcp-Param-` prefix, as declared. */
  name: string;
  /** Path of `properties` keys from the schema root to the argument. */
  path: string[];
  type: 'string' | 'integer' | 'boolean';
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Collects valid `x-mcp-header` declarations; throws on an invalid one (a tool author's mistake). */
export function collectParamHeaders(
  schema: unknown,
  path: string[] = [],
  seen = new Set<string>(),
): ParamHeader[] {
  if (!isJsonObject(schema) || !isJsonObject(schema.properties)) return [];
  const out: ParamHeader[] = [];
  for (const [key, prop] of Object.entries(schema.properties)) {
    if (!isJsonObject(prop)) continue;
    const here = [...path, key];
    const name = prop['x-mcp-header'];
    if (name !== undefined) {
      const type = prop.type;
      if (typeof name !== 'string' || !TOKEN.test(name)) {
        throw new Error(`x-mcp-header on ${here.join('.')} must be a non-empty HTTP token`);
      }
      if (type !== 'string' && type !== 'integer' && type !== 'boolean') {
        throw new Error(
          `x-mcp-header on ${here.join('.')} is only allowed on string, integer or boolean properties`,
        );
      }
      if (seen.has(name.toLowerCase())) throw new Error(`x-mcp-header "${name}" is declared twice`);
      seen.add(name.toLowerCase());
      out.push({ name, path: here, type });
    }
    out.push(...collectParamHeaders(prop, here, seen));
  }
  return out;
}

function valueAt(args: Record<string, unknown> | undefined, path: string[]): unknown {
  let cur: unknown = args;
  for (const key of path) {
    if (!isJsonObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

function matches(decoded: string, value: unknown, type: ParamHeader['type']): boolean {
  // Exactly, as integers: beyond 2^53 a JSON number was already rounded when the body was parsed, so such an
  // argument cannot be shown to match any header and never does.
  if (type === 'integer')
    return (
      Number.isSafeInteger(value) && /^-?\d+$/.test(decoded) && BigInt(decoded) === BigInt(value as number)
    );
  if (type === 'boolean') return typeof value === 'boolean' && decoded === String(value);
  return typeof value === 'string' && decoded === value;
}

export function checkParamHeaders(
  header: HeaderLookup,
  declared: readonly ParamHeader[],
  args: Record<string, unknown> | undefined,
): ProtocolError | undefined {
  for (const p of declared) {
    const value = valueAt(args, p.path);
    const raw = header(`mcp-param-${p.name.toLowerCase()}`);
    if (value === undefined || value === null) {
      if (raw !== undefined)
        return headerMismatch(`Mcp-Param-${p.name} header present but argument is absent`);
      continue;
    }
    if (raw === undefined) return headerMismatch(`missing Mcp-Param-${p.name} header`);
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return headerMismatch(`Mcp-Param-${p.name} header ${decoded.reason}`);
    if (!matches(decoded.value, value, p.type)) {
      return headerMismatch(`Mcp-Param-${p.name} header value does not match argument ${p.path.join('.')}`);
    }
  }
  return undefined;
}
