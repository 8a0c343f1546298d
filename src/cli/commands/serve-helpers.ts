// What `durable-mcp serve` logs and checks besides serving: tool errors, refused Hosts (and the names each port
// accepts), tasks waiting for other code, and whether the store answers (readiness).
import type { Logger } from '../../observability/logger.js';
import { allowedHostsFor } from '../../runtime.js';
import type { Backend } from '../../tasks/backend.js';
import type { ToolErrorReport } from '../../tasks/observer.js';
import type { OutOfScopeTasks } from '../../tasks/store.js';
import type { OriginPolicy, OriginRefusal } from '../../transport/http/origin-check.js';
import type { HttpSettings, MetricsSettings } from './serve-flags.js';

/** One error line per tool error: where it came from and its reference, never the tool's arguments or results. */
export function logToolError(logger: Logger, { taskId, tool, failure }: ToolErrorReport): void {
  const { ref, name, message, stack, step, attempt } = failure;
  logger.error({ taskId, tool, step, attempt, errorRef: ref, err: { name, message, stack } }, 'tool error');
}

/** A warning per tool version whose tasks wait for a server that runs that version (none here does). */
export function logOutOfScope(logger: Logger, waiting: readonly OutOfScopeTasks[]): void {
  for (const { tool, version, count } of waiting)
    logger.warn({ tool, version, count }, 'tasks wait for a server that runs their tool version');
}

/** A warning per refused Host or Origin value, at most once a minute for each value. */
export function refusalLog(logger: Logger): (refusal: OriginRefusal) => void {
  const last = new Map<string, number>();
  return ({ header, value, reason }) => {
    const key = `${header} ${value ?? ''}`;
    const now = Date.now();
    if ((last.get(key) ?? -Infinity) > now - 60_000) return;
    if (last.size >= 1_000) last.clear();
    last.set(key, now);
    logger.warn({ header, value, reason }, 'request refused: Host or Origin not allowed (--allowed-hosts)');
  };
}

/** The Host and Origin names the MCP port accepts: loopback, its bound name and --allowed-hosts. */
export function mainOrigin(http: HttpSettings, logger: Logger): OriginPolicy {
  return { allowedHosts: allowedHostsFor(http.host, http.extraHosts), onRefused: refusalLog(logger) };
}

/** The metrics port's: loopback, its bound name, --metrics-allowed-hosts, and any IP address (probes, scrapers). */
export function metricsOrigin(at: NonNullable<MetricsSettings['listen']>, logger: Logger): OriginPolicy {
  return {
    allowedHosts: allowedHostsFor(at.host, at.extraHosts),
    ipLiterals: true,
    setting: '--metrics-allowed-hosts',
    onRefused: refusalLog(logger),
  };
}

/**
 * Whether the store answers: one cheap lookup, at most every 2 s (probes in between share its answer). Probes get
 * only "store unreachable"; why, and when it answers again, go to the log (once per change).
 */
export function storeCheck(backend: Backend, logger?: Logger): () => Promise<string | undefined> {
  let last: { at: number; answer: Promise<string | undefined> } | undefined;
  let down = false;
  return () => {
    const now = Date.now();
    if (last !== undefined && now - last.at < 2_000) return last.answer;
    const answer = backend.tasks.get('readiness-probe', { tenant: '', principal: '' }, now).then(
      () => {
        if (down) logger?.info('ready: the store answers again');
        down = false;
        return undefined;
      },
      (err: unknown) => {
        if (!down) logger?.warn({ err }, 'not ready: the store does not answer');
        down = true;
        return 'store unreachable';
      },
    );
    last = { at: now, answer };
    return answer;
  };
}
