// The MCP endpoint for node:http as durable-mcp serves it: the HTTP edge with the 2026-07-28 core and, unless
// switched off, the 2025-11-25 stateful wire beside it, and the operator API when one is configured.
import { createAdminRoute, type AdminApiOptions } from './admin/api.js';
import { createLegacyWire, type LegacyOptions } from './legacy/wire.js';
import { createHttpEdge, type HttpEdgeOptions, type HttpHandler } from './transport/http/handler.js';
import type { HttpWire } from './transport/http/wire.js';

export interface HttpHandlerOptions extends Omit<HttpEdgeOptions, 'wires'> {
  /**
   * The 2025-11-25 wire on the same endpoint (default on). Give it the task store so that sessions and tasks/list
   * are shared by every replica (`createDurableMcp(…).listen()` does); `false` turns it off.
   */
  legacy?: LegacyOptions | false;
  /** Other wires, offered each request after the legacy one and before the modern core. */
  wires?: readonly HttpWire[];
  /**
   * The operator API under `/admin/api/v1` (docs/operations.md), for the operators the authenticator grants. Give it
   * only when the authenticator can grant the role and the store has an `admin` port; without it every `/admin/…`
   * path is 404, as any unknown path.
   */
  admin?: AdminApiOptions;
}

export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const { legacy, wires = [], admin, ...edge } = options;
  const legacyWire = legacy === false ? [] : [createLegacyWire({ server: options.server, ...legacy })];
  const adminRoute =
    admin === undefined
      ? undefined
      : createAdminRoute({
          ...admin,
          authenticator: options.authenticator,
          audit: options.audit,
          onError: options.onError,
          onResponse: options.onResponse,
        });
  const { extraRoutes } = options;
  const routes: HttpEdgeOptions['extraRoutes'] =
    adminRoute === undefined
      ? extraRoutes
      : (req, res) => adminRoute(req, res) || (extraRoutes?.(req, res) ?? false);
  return createHttpEdge({ ...edge, extraRoutes: routes, wires: [...legacyWire, ...wires] });
}
