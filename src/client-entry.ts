// Public entry of `durable-mcp/client`: the client library plus its SQLite journal.
export * from './client/index.js';
import type { Journal } from './client/journal.js';
import { createSqliteJournal as openJournal } from './stores/sqlite/client-journal.js';

/** A durable client journal in a SQLite file: `createClient({ journal: createSqliteJournal('tasks.journal') })`. */
export const createSqliteJournal = (path: string): Journal => openJournal(path);
