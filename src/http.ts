// The MCP endpoint for node:http as durable-mcp serves it: the HTTP edge with the 2026-07-28 core and, unless
// switched off, the 2025-11-25 stateful wire beside it, the operator API when one is configured, and the routes that
// deliver events to tasks when they are.
import { createAdminRoute, type AdminApiOptions } from './admin/api.js';
import { checkedEvents, createEventRoutes, type EventRouteOptions } from './events/routes.js';
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
  /**
   * The routes that deliver events to tasks (ctx.waitForEvent): `POST /tasks/{id}/events/{name}` for a task's owner,
   * and with `tokens`, `POST /callbacks/{token}` for signed callback URLs (docs/security.md). Without it those paths
   * are 404. `createDurableMcp(…).listen()` gives them when the store keeps events.
   */
  events?: Omit<EventRouteOptions, 'authenticator' | 'audit' | 'onError' | 'onResponse'>;
}

export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const { legacy, wires = [], admin, events, ...edge } = options;
  const legacyWire = legacy === false ? [] : [createLegacyWire({ server: options.server, ...legacy })];
  const adminRoute =
    admin === undefined
      ? undefined
      : createAdminRoute({
          ...admin,
          events: admin.events === undefined ? undefined : checkedEvents(admin.events),
          authenticator: options.authenticator,
          audit: options.audit,
          onError: options.onError,
          onResponse: options.onResponse,
        });
  const eventRoute =
    events === undefined
      ? undefined
      : createEventRoutes({
          ...events,
          authenticator: options.authenticator,
          audit: options.audit,
          onError: options.onError,
          onResponse: options.onResponse,
        });
  const served = [adminRoute, eventRoute, options.extraRoutes].filter((r) => r !== undefined);
  const routes: HttpEdgeOptions['extraRoutes'] =
    served.length === 0 ? undefined : (req, res) => served.some((route) => route(req, res));
  return createHttpEdge({ ...edge, extraRoutes: routes, wires: [...legacyWire, ...wires] });
}
