// The client journal file: tasks and pending calls survive a reopen, with their labels, and files of earlier releases
// open as they are.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteJournal } from './client-journal.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-journal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const call = (key: string, server = 'http://a/mcp') => ({
  idempotencyKey: key,
  server,
  tool: 'deploy',
  args: { env: 'prod', n: [1, 2] },
  createdAt: 1_700_000_000_000,
});

describe('SQLite client journal', () => {
  it('keeps pending calls until they end, across a reopen, per server', () => {
    const path = join(dir, 'j.db');
    const first = createSqliteJournal(path);
    first.beginCall(call('k1'));
    first.beginCall(call('k2', 'http://b/mcp'));
    first.close();
    const again = createSqliteJournal(path);
    expect(again.pendingCalls('http://a/mcp')).toEqual([call('k1')]);
    expect(again.pendingCalls().map((c) => c.idempotencyKey)).toEqual(['k1', 'k2']);
    again.endCall('k1');
    expect(again.pendingCalls('http://a/mcp')).toEqual([]);
    again.close();
  });

  it('opens a journal of the first release and keeps its tasks', () => {
    const path = join(dir, 'old.db');
    const old = new Database(path);
    old.exec(`CREATE TABLE journal (
      task_id TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL
    ) STRICT`);
    old.prepare(`INSERT INTO journal VALUES ('task_1', 'http://a/mcp', 'deploy', 1, 'working')`).run();
    old.close();
    const journal = createSqliteJournal(path);
    expect(journal.unfinished()).toEqual([
      { taskId: 'task_1', server: 'http://a/mcp', tool: 'deploy', createdAt: 1, status: 'working' },
    ]);
    journal.record({
      taskId: 'task_2',
      server: 'http://a/mcp',
      tool: 'deploy',
      createdAt: 2,
      status: 'working',
      idempotencyKey: 'k',
    });
    journal.beginCall(call('k3'));
    journal.close();
    const reopened = createSqliteJournal(path);
    expect(reopened.unfinished().map((e) => e.idempotencyKey)).toEqual([undefined, 'k']);
    expect(reopened.pendingCalls()).toHaveLength(1);
    reopened.close();
  });

  it("keeps the label of a call and its task, and the task's arguments only while it is unfinished", () => {
    const path = join(dir, 'labels.db');
    const journal = createSqliteJournal(path);
    journal.beginCall({ ...call('k1'), label: 'nightly deploy' });
    const task = {
      taskId: 'task_1',
      server: 'http://a/mcp',
      tool: 'deploy',
      createdAt: 1,
      status: 'working',
      idempotencyKey: 'k1',
      label: 'nightly deploy',
      args: { env: 'prod' },
    };
    journal.record(task);
    // The same task found again by a call sent again keeps what the journal knows.
    journal.record({ ...task, status: 'input_required', label: undefined, args: undefined });
    journal.close();
    const reopened = createSqliteJournal(path);
    expect(reopened.pendingCalls()).toEqual([{ ...call('k1'), label: 'nightly deploy' }]);
    expect(reopened.unfinished()).toEqual([{ ...task, status: 'input_required' }]);
    reopened.update('task_1', 'completed');
    reopened.record({ ...task, taskId: 'task_2', status: 'completed' });
    reopened.close();
    const file = new Database(path, { readonly: true });
    expect(file.prepare(`SELECT task_id, label, args FROM journal ORDER BY task_id`).all()).toEqual([
      { task_id: 'task_1', label: 'nightly deploy', args: null },
      { task_id: 'task_2', label: 'nightly deploy', args: null },
    ]);
    file.close();
  });

  it('opens a journal of the release before labels and keeps its calls and tasks', () => {
    const path = join(dir, 'v2.db');
    const old = new Database(path);
    old.exec(`CREATE TABLE journal (
      task_id TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL
    ) STRICT;
    ALTER TABLE journal ADD COLUMN idempotency_key TEXT;
    CREATE TABLE calls (
      idempotency_key TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
      created_at INTEGER NOT NULL
    ) STRICT;
    PRAGMA user_version = 2;`);
    old.prepare(`INSERT INTO journal VALUES ('task_1', 'http://a/mcp', 'deploy', 1, 'working', 'k0')`).run();
    old
      .prepare(`INSERT INTO calls VALUES ('k1', 'http://a/mcp', 'deploy', '{"env":"prod","n":[1,2]}', ?)`)
      .run(call('k1').createdAt);
    old.close();
    const journal = createSqliteJournal(path);
    expect(journal.unfinished()).toEqual([
      {
        taskId: 'task_1',
        server: 'http://a/mcp',
        tool: 'deploy',
        createdAt: 1,
        status: 'working',
        idempotencyKey: 'k0',
      },
    ]);
    expect(journal.pendingCalls()).toEqual([call('k1')]);
    journal.beginCall({ ...call('k2'), createdAt: call('k1').createdAt + 1, label: 'new' });
    expect(journal.pendingCalls().map((c) => c.label)).toEqual([undefined, 'new']);
    journal.close();
  });
});
