// Structured JSON logs (pino) on stderr; request and task ids ride along as fields, payloads never do.
import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * `instance` rides on every line: which replica wrote it (default: host name and process id), so lines of several
 * replicas collected in one place can be told apart.
 */
export function createLogger(level = 'info', instance = `${hostname()}:${process.pid}`): Logger {
  return pino(
    { level, base: { service: 'durable-mcp', instance } },
    pino.destination({ fd: 2, sync: false }),
  );
}
