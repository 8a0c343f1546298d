// Structured JSON logs (pino) on stderr; request and task ids ride along as fields, payloads never do.
import { pino, type Logger } from 'pino';
import { processInstance } from '../tasks/instance.js';

export type { Logger };

/**
 * `instance` rides on every line: which replica wrote it (default: host name and process id, as lease owner ids begin),
 * so lines of several replicas collected in one place can be told apart and matched to the tasks they hold.
 */
export function createLogger(level = 'info', instance = processInstance()): Logger {
  return pino(
    { level, base: { service: 'durable-mcp', instance } },
    pino.destination({ fd: 2, sync: false }),
  );
}
