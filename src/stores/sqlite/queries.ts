// Prepared SQL for the SQLite task store, one file per concern under sql/; every write after a claim is
// conditional on the fencing token.
import type { PayloadCodec } from './codec.js';
import type { SqliteDatabase } from './database.js';
import { prepareChildQueries } from './sql/children.js';
import { prepareClaimQueries } from './sql/claims.js';
import { prepareCreationQueries } from './sql/creation.js';
import { prepareEndingQueries } from './sql/endings.js';
import { prepareEventQueries } from './sql/events.js';
import { prepareOutsideEventQueries } from './sql/outside-events.js';
import { prepareOwnerWriteQueries } from './sql/owner-writes.js';
import { prepareRateQueries } from './sql/rate-limits.js';
import { prepareReadQueries } from './sql/reads.js';
import { prepareRunWriteQueries } from './sql/run-writes.js';
import { preparePauseQueries } from './sql/pauses.js';
import { prepareScopeQueries } from './sql/scope.js';
import { prepareHolderQueries, prepareSlotQueries } from './sql/slots.js';
import { prepareSweepQueries } from './sql/sweeps.js';

export function prepareQueries(db: SqliteDatabase, codec: PayloadCodec) {
  return {
    ...prepareCreationQueries(db),
    ...prepareReadQueries(db),
    ...prepareClaimQueries(db),
    ...prepareScopeQueries(db),
    ...prepareRunWriteQueries(db, codec),
    ...prepareEndingQueries(db, codec),
    ...prepareOwnerWriteQueries(db, codec),
    ...prepareSweepQueries(db),
    ...prepareEventQueries(db),
    ...prepareSlotQueries(db),
    ...prepareRateQueries(db),
    ...preparePauseQueries(db),
    ...prepareHolderQueries(db),
    ...prepareChildQueries(db),
    ...prepareOutsideEventQueries(db),
  };
}

export type Queries = ReturnType<typeof prepareQueries>;
