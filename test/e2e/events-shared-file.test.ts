// Events from outside a task across two servers sharing one SQLite file: delivered to either, the task resumes on
// the one that runs it (it hears the change from the file's change log), as support/event-acceptance.ts checks.
import { describe, it } from 'vitest';
import { expectEventsAcrossReplicas } from '../support/event-acceptance.js';
import { sqliteFiles } from '../support/sqlite-files.js';

const { freshPath, open } = sqliteFiles();

describe('events from outside across two servers on one SQLite file', () => {
  it(
    'resume the task on the server that runs it, whichever server takes them',
    { timeout: 60_000 },
    async () => {
      const path = freshPath();
      await expectEventsAcrossReplicas(open(path), open(path));
    },
  );
});
