// The push-latency server: the runtime embedded through the package's public API (the same store, extension,
// worker and HTTP handler `durable-mcp serve` wires together), plus a commit clock. Usage:
//   push-server.ts <sqlite file>
//   push-server.ts postgres://… <schema>      (several such processes on one schema are replicas)
// It prints `listening on <url>` like `serve`. Commit clock: from `POST /bench/commits` (which also forgets what was
// recorded before) on, the first listener of the store's change feed — registered before the runtime exists, so it
// runs before the worker and every subscriber — reads CLOCK_MONOTONIC (process.hrtime: the same clock in every
// process on the machine) for the first change of each task that makes it runnable (`working`: an answer resumed it)
// and the first that does not (`completed`: the run's final write). `GET /bench/commits` answers
// {"<taskId>": {"working": "<ns>", "completed": "<ns>"}}. On one process that is right after the commit. With
// replicas each process stamps the change when it learns of it (its own commit, or another's NOTIFY); the earliest
// stamp over the replicas is the best bound on the commit (and precedes every push of it).
// Write clock: while recording, every `res.write` of a notifications/tasks event is stamped the same way, per task
// and status (`GET /bench/writes` answers {"<taskId>": {"working": ["<ns>", …], "completed": [...]}}), so the
// harness can tell the server's share of a push (commit → event handed to the socket) from the rest.
import { ServerResponse, type IncomingMessage } from 'node:http';
// The bare stores come from `durable-mcp/advanced`: the commit clock must subscribe to the change feed before the
// runtime exists.
import { createPostgresTaskStore, createSqliteTaskStore } from '../../dist/src/advanced.js';
import {
  LOOPBACK_HOSTS,
  createAnonymousAuthenticator,
  createDurableMcp,
  createHttpHandler,
  listenHttp,
  type TaskStore,
} from '../../dist/src/index.js';
import { tools } from '../tools.mjs';

const [path, schema] = process.argv.slice(2);
/** Connections per PostgreSQL replica (plus one for LISTEN): one request at a time is all this server sees. */
const PG_POOL = 4;
if (path === undefined || (path.startsWith('postgres') && schema === undefined)) {
  console.error('usage: push-server.ts <sqlite file> | push-server.ts <postgres url> <schema>');
  process.exit(2);
}

const store: TaskStore = path.startsWith('postgres')
  ? createPostgresTaskStore({ connectionString: path, schema: schema!, poolSize: PG_POOL })
  : createSqliteTaskStore({ path });
let recording = false;
type Stamped<T> = { working?: T; completed?: T };
/** taskId → { working?, completed? } (nanoseconds, CLOCK_MONOTONIC). */
const commits = new Map<string, Stamped<string>>();
if (store.changes === undefined) throw new Error('the store has no change feed');
store.changes.subscribe((change) => {
  if (!recording) return;
  const at = process.hrtime.bigint();
  let entry = commits.get(change.taskId);
  if (entry === undefined) commits.set(change.taskId, (entry = {}));
  entry[change.runnable ? 'working' : 'completed'] ??= String(at);
});

/** taskId → { working?: string[], completed?: string[] }: when each subscriber's event was written. */
const writes = new Map<string, Stamped<string[]>>();
const EVENT = /"method":"notifications\/tasks".*?"taskId":"([^"]+)","status":"(working|completed)"/;
const write = ServerResponse.prototype.write as (
  this: ServerResponse,
  chunk: unknown,
  ...rest: unknown[]
) => boolean;
ServerResponse.prototype.write = function stampedWrite(
  this: ServerResponse,
  chunk: unknown,
  ...rest: unknown[]
) {
  const written = write.call(this, chunk, ...rest);
  if (recording && typeof chunk === 'string') {
    const m = EVENT.exec(chunk);
    if (m !== null) {
      let entry = writes.get(m[1]!);
      if (entry === undefined) writes.set(m[1]!, (entry = {}));
      (entry[m[2] as keyof Stamped<string[]>] ??= []).push(String(process.hrtime.bigint()));
    }
  }
  return written;
} as typeof ServerResponse.prototype.write;

/** The commit and write clocks' routes; false for any other request. */
function benchRoutes(req: IncomingMessage, res: ServerResponse): boolean {
  let answer: object;
  if (req.url === '/bench/commits' && req.method === 'POST') {
    commits.clear();
    writes.clear();
    recording = true;
    answer = {};
  } else if (req.url === '/bench/commits' && req.method === 'GET') answer = Object.fromEntries(commits);
  else if (req.url === '/bench/writes' && req.method === 'GET') answer = Object.fromEntries(writes);
  else return false;
  const body = JSON.stringify(answer);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  return true;
}

const runtime = createDurableMcp({
  toolSets: [{ tools }],
  store,
  tasks: { tasksGetRate: false, maxActiveTasksPerPrincipal: 0 },
  // The bench is one principal holding up to 1,000 streams: the per-principal cap is not what it measures.
  server: { maxListensPerPrincipal: 100_000 },
});
const handler = createHttpHandler({
  server: runtime.server,
  authenticator: createAnonymousAuthenticator(),
  origin: { allowedHosts: [...LOOPBACK_HOSTS] },
  extraRoutes: benchRoutes,
});
const running = await listenHttp(handler, '127.0.0.1', 0);
console.log(`listening on ${running.url}`);
process.once('SIGTERM', () => {
  void running
    .close(1_000)
    .then(() => runtime.close(1_000))
    .then(() => process.exit(0));
});
