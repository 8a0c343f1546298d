// What each statement of a durable task costs on SQLite (creation INSERT, claim reads, lease UPDATE, ending UPDATE,
// commit), in CPU µs per task, against a store holding --fill tasks, and what each index, trigger or connection
// setting of the variants adds to it: each variant runs on a copy of the same file, its samples alternating with the
// unchanged copy's, so that a busy machine slows both alike. Uses the built statements (dist/): `npm run build` first.
//
//   node bench/sqlite-statements.mjs [--fill 10000] [--samples 30] [--batch 32] [--only REGEX]
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    fill: { type: 'string', default: '10000' },
    samples: { type: 'string', default: '30' },
    batch: { type: 'string', default: '32' },
    only: { type: 'string', default: '.' },
  },
});
const FILL = Number(opt.fill);
const SAMPLES = Number(opt.samples);
const BATCH = Number(opt.batch);
const only = new RegExp(opt.only);
const dist = new URL('../dist/src/stores/', import.meta.url);
const { openSqlite } = await import(new URL('sqlite/database.js', dist).href);
const { prepareQueries } = await import(new URL('sqlite/queries.js', dist).href);
const { createPayloadCodec } = await import(new URL('sqlite/codec.js', dist).href);
const { createPayloadSealing } = await import(new URL('payload-sealing.js', dist).href);

const dir = mkdtempSync(join(tmpdir(), 'sqlite-statements-'));
const scope = { scoped: true, tools: ['bench'], versions: [], orphanedBefore: null };
let clock = Date.now();

/** A task as the creation lane encodes it: one owner and tool, a TTL, as the bench's task rows create. */
const encoded = () => ({
  id: randomUUID(),
  tenant: 't',
  principal: 'p',
  tool: 'bench',
  toolVersion: null,
  args: JSON.stringify({ n: 1, text: 'hello world' }),
  statusMessage: null,
  createdAt: clock,
  ttlMs: 3_600_000,
  pollIntervalMs: null,
  replay: true,
  caps: '{}',
  sealed: false,
  answers: [],
  idempotencyKey: null,
  activeLimit: null,
  storedLimit: null,
  tenantActiveLimit: null,
  tenantStoredLimit: null,
  storedBytesLimit: null,
  concurrencyKey: null,
  concurrencyLimit: null,
  concurrencyHold: null,
  rateKey: null,
  rateLimit: null,
  ratePeriodMs: null,
  priority: 0,
  debounceKey: null,
  wakeAt: null,
  traceParent: null,
  traceState: null,
  parentId: null,
  detached: false,
});

/** The store's statements on `db`, their SQL passed through `rewrite` (a variant without an index drops INDEXED BY). */
function statements(db, rewrite) {
  const proxy = new Proxy(db, {
    get(target, prop) {
      if (prop === 'prepare') return (sql) => target.prepare(rewrite(sql));
      const v = Reflect.get(target, prop);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return prepareQueries(
    proxy,
    createPayloadCodec(createPayloadSealing({}), () => false),
  );
}

const PHASES = ['insert', 'due', 'next', 'best', 'lease', 'reads', 'finish', 'commit'];

/**
 * `rounds` rounds, each BATCH creations and the previous round's endings in one transaction (as the group commit
 * shares them), then BATCH claims in another (claimBatch); returns the CPU µs per task of each phase.
 */
function run({ db, q }, rounds) {
  const spent = Object.fromEntries(PHASES.map((p) => [p, 0]));
  const timed = (phase, fn) => {
    const start = process.cpuUsage();
    const v = fn();
    const d = process.cpuUsage(start);
    spent[phase] += d.user + d.system;
    return v;
  };
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const done = { kind: 'completed', result: { content: [] } };
  let claimed = [];
  for (let r = 0; r <= rounds; r++) {
    clock += 1;
    begin.run();
    if (r < rounds) for (let i = 0; i < BATCH; i++) timed('insert', () => q.insertTask(encoded()));
    for (const c of claimed) timed('finish', () => q.finish(c.id, c.attempt, done, clock));
    timed('commit', () => commit.run());
    if (r === rounds) break;
    clock += 1;
    begin.run();
    timed('due', () => q.requeueWoken(clock));
    claimed = [];
    for (let i = 0; i < BATCH; i++) {
      const head = timed('next', () => q.nextInScope(clock, scope));
      if (head === undefined) break;
      const best = timed('best', () => q.ownerBestInScope(clock, scope, head)) ?? head;
      const row = timed('lease', () => q.takeLease(best.id, 'w', clock + 60_000));
      timed('reads', () => [q.steps(row.id), q.inputs(row.id), q.stepAttempts(row.id)]);
      claimed.push(row);
    }
    timed('commit', () => commit.run());
  }
  return Object.fromEntries(PHASES.map((p) => [p, spent[p] / (rounds * BATCH)]));
}

const basePath = join(dir, 'base.db');
const asIs = (sql) => sql;
{
  const db = openSqlite({ path: basePath, synchronous: 'NORMAL' });
  run({ db, q: statements(db, asIs) }, Math.ceil(FILL / BATCH));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

let copies = 0;
function open(setup, rewrite) {
  const path = join(dir, `copy${copies++}.db`);
  copyFileSync(basePath, path);
  const db = openSqlite({ path, synchronous: 'NORMAL' });
  for (const sql of setup) db.exec(sql);
  const side = { db, q: statements(db, rewrite) };
  run(side, 10); // warm-up
  return side;
}

const schema = openSqlite({ path: basePath, synchronous: 'NORMAL' });
const indexes = schema
  .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' AND sql IS NOT NULL`)
  .pluck()
  .all();
const triggers = schema.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).pluck().all();
schema.close();
const variants = [
  ...indexes.map((name) => [
    `- index ${name}`,
    [`DROP INDEX ${name}`],
    (sql) => sql.replaceAll(`INDEXED BY ${name}`, ''),
  ]),
  ...triggers.map((name) => [`- trigger ${name}`, [`DROP TRIGGER ${name}`], asIs]),
  ['temp_store = MEMORY', ['PRAGMA temp_store = MEMORY'], asIs],
  ['cache_size = -16384', ['PRAGMA cache_size = -16384'], asIs],
  ['mmap_size = 256 MiB', ['PRAGMA mmap_size = 268435456'], asIs],
  ['temp_store + cache_size', ['PRAGMA temp_store = MEMORY', 'PRAGMA cache_size = -16384'], asIs],
].filter(([name]) => only.test(name));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cell = (v) => v.toFixed(1).padStart(8);
console.log(
  `CPU µs per task: medians of ${SAMPLES} samples of 5×${BATCH} tasks; ${FILL} tasks stored before`,
);
console.log(['variant'.padEnd(40), ...PHASES.map((p) => p.padStart(8)), '   total'].join(''));
let shownBase = false;
for (const [name, setup, rewrite] of variants) {
  let base, variant;
  try {
    base = open([], asIs);
    variant = open(setup, rewrite);
  } catch (err) {
    console.log(`${name.padEnd(40)}n/a: ${err.message}`);
    base?.db.close();
    continue;
  }
  const samples = { base: [], variant: [] };
  for (let s = 0; s < SAMPLES; s++) {
    samples.base.push(run(base, 5));
    samples.variant.push(run(variant, 5));
  }
  const med = (list) => Object.fromEntries(PHASES.map((p) => [p, median(list.map((x) => x[p]))]));
  const b = med(samples.base);
  const v = med(samples.variant);
  const total = (x) => PHASES.reduce((sum, p) => sum + x[p], 0);
  if (!shownBase) {
    console.log(['as migrated'.padEnd(40), ...PHASES.map((p) => cell(b[p])), cell(total(b))].join(''));
    shownBase = true;
  }
  const delta = (x, y) => (x - y >= 0 ? '+' : '') + (x - y).toFixed(1);
  console.log(
    [
      name.padEnd(40),
      ...PHASES.map((p) => delta(v[p], b[p]).padStart(8)),
      delta(total(v), total(b)).padStart(8),
    ].join(''),
  );
  base.db.close();
  variant.db.close();
}
rmSync(dir, { recursive: true, force: true });
