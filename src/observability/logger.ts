// Structured JSON logs (pino) on stderr; request and task ids ride along as fields, payloads never do.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level = 'info'): Logger {
  return pino({ level, base: { service: 'durable-mcp' } }, pino.destination({ fd: 2, sync: false }));
}
