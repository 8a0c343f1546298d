-- PostgreSQL migration 22: slots held for a task's whole life (task.concurrency.hold, sql/slots.ts).
-- concurrency_hold: 'task' when the task holds its slot from its first run until it ends, through sleeps, retry
-- back-offs and waits for input (its slot row then counts while the task is working or waiting for input, whatever
-- its lease); NULL (every task stored before): the slot is held while a run's lease is. An older replica ignores the
-- column: it counts such a slot only while a run holds its lease, so during a rolling upgrade it may start a task of
-- a key whose slot a sleeping task holds. A nullable column without a default: no table rewrite.
ALTER TABLE :schema.tasks ADD COLUMN concurrency_hold text;
