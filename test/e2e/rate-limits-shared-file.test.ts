// task.rateLimit across processes sharing one SQLite file (three store instances, each with its own worker): a
// 10/s limit holds within 10% over 30 s while tasks are created at 15/s; starts are read from the stored history.
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { expectRateHeldAcrossReplicas } from '../support/rate-acceptance.js';
import { sqliteFiles } from '../support/sqlite-files.js';

const { freshPath, open } = sqliteFiles();

describe('rate limits on one SQLite file shared by three stores', () => {
  it('hold 10 starts a second within 10% over 30 s', { timeout: 90_000 }, async () => {
    const path = freshPath();
    const stores = [open(path), open(path), open(path)];
    await expectRateHeldAcrossReplicas(stores, `charges-${randomUUID()}`);
  });
});
