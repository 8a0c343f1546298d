// `serve --metrics-port`: GET /metrics on a listener of its own (an internal interface, a port only the scraper
// reaches), with /healthz and /readyz beside it for probes; the MCP port then answers 404 for /metrics. Every route
// but /healthz checks Host and Origin against the names of this port, which also accepts IP addresses: probes and
// scrapers reach a pod by its address, and DNS rebinding cannot send one.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from '../../observability/metrics.js';
import { NOT_FOUND_BODY } from '../../transport/http/handler.js';
import {
  listenHttp,
  type ListenHttpOptions,
  type RunningHttpServer,
} from '../../transport/http/node-server.js';
import { checkOrigin, type OriginPolicy } from '../../transport/http/origin-check.js';

function json(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** What the metrics port serves: its metrics, its readiness, and the Host names it answers. */
export interface MetricsPort {
  /** Undefined until the store has opened (then /metrics answers 503, like every other request of a process that is starting). */
  metrics: () => Metrics | undefined;
  readiness: () => Promise<string | undefined>;
  origin: OriginPolicy;
}

export function metricsHandler(port: MetricsPort): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    const probe = req.method === 'GET' || req.method === 'HEAD';
    if (probe && pathname === '/healthz') return json(res, 200, '{"status":"ok"}');
    const forbidden = checkOrigin(port.origin, req.headers.host, req.headers.origin);
    if (forbidden !== undefined)
      json(res, 403, JSON.stringify({ error: { code: 'forbidden', message: forbidden } }));
    else if (probe && pathname === '/readyz')
      port.readiness().then(
        (reason) =>
          reason === undefined
            ? json(res, 200, '{"status":"ready"}')
            : json(res, 503, JSON.stringify({ status: 'not ready', reason })),
        () => json(res, 503, '{"status":"not ready","reason":"check failed"}'),
      );
    else if (port.metrics()?.route(req, res) === true) return;
    else if (req.method === 'GET' && pathname === '/metrics')
      json(res, 503, '{"status":"not ready","reason":"store unreachable"}');
    else json(res, 404, NOT_FOUND_BODY);
  };
}

export function listenMetrics(
  at: { host: string; port: number },
  limits: ListenHttpOptions,
  port: MetricsPort,
): Promise<RunningHttpServer> {
  return listenHttp(metricsHandler(port), at.host, at.port, '/metrics', limits);
}
