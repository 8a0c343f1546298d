// `serve --metrics-port`: GET /metrics on a listener of its own (an internal interface, a port only the scraper
// reaches), with /healthz and /readyz beside it for probes; the MCP port then answers 404 for /metrics.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from '../../observability/metrics.js';
import { NOT_FOUND_BODY } from '../../transport/http/handler.js';
import {
  listenHttp,
  type ListenHttpOptions,
  type RunningHttpServer,
} from '../../transport/http/node-server.js';

function json(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Serves the metrics that `metrics()` returns: undefined until the store has opened (then /metrics answers 503, like
 * every other request of a process that is starting).
 */
export function metricsHandler(
  metrics: () => Metrics | undefined,
  readiness: () => Promise<string | undefined>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    const probe = req.method === 'GET' || req.method === 'HEAD';
    if (probe && pathname === '/healthz') json(res, 200, '{"status":"ok"}');
    else if (probe && pathname === '/readyz')
      readiness().then(
        (reason) =>
          reason === undefined
            ? json(res, 200, '{"status":"ready"}')
            : json(res, 503, JSON.stringify({ status: 'not ready', reason })),
        () => json(res, 503, '{"status":"not ready","reason":"check failed"}'),
      );
    else if (metrics()?.route(req, res) === true) return;
    else if (req.method === 'GET' && pathname === '/metrics')
      json(res, 503, '{"status":"not ready","reason":"store unreachable"}');
    else json(res, 404, NOT_FOUND_BODY);
  };
}

export function listenMetrics(
  at: { host: string; port: number },
  limits: ListenHttpOptions,
  metrics: () => Metrics | undefined,
  readiness: () => Promise<string | undefined>,
): Promise<RunningHttpServer> {
  return listenHttp(metricsHandler(metrics, readiness), at.host, at.port, '/metrics', limits);
}
