// The operators' dashboard: `GET /admin` (its page) and `/admin/ui/<name>.js|.css` (its scripts and style), files
// built into dist beside this module, served under a strict Content-Security-Policy and loading nothing from other
// hosts. Each file is read once, then answered from memory with an ETag.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { sendError } from './reply.js';

export const DASHBOARD_PATH = '/admin';
const ASSET_PREFIX = '/admin/ui/';
const ASSET_NAME = /^[a-z][a-z0-9-]{0,63}\.(js|css)$/;
const CONTENT_TYPES = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
} as const;

/** Every response of the dashboard carries these. */
export const DASHBOARD_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** A route of the edge: true when it answered (a dashboard path), false for any other. */
export type AssetRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/** `dir`: where index.html, dashboard.css and the compiled scripts are (default: `ui/` beside this module). */
export function createAssetRoute(
  dir: string = fileURLToPath(new URL('./ui/', import.meta.url)),
  onError?: (err: unknown) => void,
): AssetRoute {
  const cache = new Map<string, Promise<Asset | undefined>>();
  const load = (name: string, type: string): Promise<Asset | undefined> => {
    let asset = cache.get(name);
    if (asset === undefined) {
      asset = readFile(`${dir}/${name}`).then(
        (body) => ({ body, type, etag: `"${createHash('sha256').update(body).digest('base64url')}"` }),
        () => undefined,
      );
      cache.set(name, asset);
    }
    return asset;
  };
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    let name: string;
    let type: string;
    if (path === DASHBOARD_PATH || path === `${DASHBOARD_PATH}/`) {
      name = 'index.html';
      type = CONTENT_TYPES.html;
    } else if (path.startsWith(ASSET_PREFIX)) {
      const match = ASSET_NAME.exec(path.slice(ASSET_PREFIX.length));
      if (match === null) return false;
      name = match[0];
      type = CONTENT_TYPES[match[1] as 'js' | 'css'];
    } else return false;
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, 'method_not_allowed', 'Method not allowed: use GET, HEAD', { allow: 'GET, HEAD' });
      return true;
    }
    load(name, type).then(
      (asset) => send(req, res, asset),
      (err: unknown) => {
        onError?.(err);
        sendError(res, 'internal', 'Internal error');
      },
    );
    return true;
  };
}

function send(req: IncomingMessage, res: ServerResponse, asset: Asset | undefined): void {
  if (asset === undefined) {
    sendError(res, 'not_found', 'Not found');
    return;
  }
  // No-cache: kept by the browser, but checked with the server each time (names are not versioned).
  const headers = { ...DASHBOARD_HEADERS, 'cache-control': 'no-cache', etag: asset.etag };
  if (req.headers['if-none-match'] === asset.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, 'content-type': asset.type, 'content-length': asset.body.length });
  res.end(req.method === 'HEAD' ? undefined : asset.body);
}
