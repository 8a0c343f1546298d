/**
 * Public entry of `durable-mcp/journal`: the client's journal in a SQLite file. Kept apart from `durable-mcp/client`
 * so that a client without a journal (or with its own) never loads the native SQLite addon.
 *
 * @module durable-mcp/journal
 */
import type { Journal } from './client/journal.js';
import { createSqliteJournal as openJournal } from './stores/sqlite/client-journal.js';

/** A durable client journal in a SQLite file: `createClient({ journal: createSqliteJournal('tasks.journal') })`. */
export const createSqliteJournal = (path: string): Journal => openJournal(path);

export type { Journal, JournalEntry, PendingCall } from './client/journal.js';
