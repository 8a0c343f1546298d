// The push-latency server of the benchmark: the runtime embedded through the package's public API (the same
// store, extension, worker and HTTP handler `durable-mcp serve` wires together), plus a commit clock. Usage:
//   node bench/push-server.mjs <sqlite file>
// It prints `listening on <url>` like `serve`. GET /bench/commits answers, for every task whose transition to
// `working` (an answer that resumed it) or `completed` has committed, the CLOCK_MONOTONIC reading (process.hrtime,
// the same clock in every process on the machine) taken by the first listener of the store's change feed, i.e.
// right after the commit and before any subscriber is told: {"<taskId>": {"working": "<ns>", "completed": "<ns>"}}.
import {
  LOOPBACK_HOSTS,
  createAnonymousAuthenticator,
  createDurableMcp,
  createHttpHandler,
  createSqliteTaskStore,
  listenHttp,
} from '../dist/src/index.js';
import { tools } from './tools.mjs';

const path = process.argv[2];
if (path === undefined) {
  console.error('usage: node bench/push-server.mjs <sqlite file>');
  process.exit(2);
}

const inner = createSqliteTaskStore({ path });
/** taskId → the transition its next change commits. */
const expected = new Map();
/** taskId → { working?: string, completed?: string } (nanoseconds, CLOCK_MONOTONIC). */
const commits = new Map();
// Registered before the runtime exists, so it runs first on every change: before the worker and the subscribers.
inner.changes.subscribe((change) => {
  const at = process.hrtime.bigint();
  const transition = expected.get(change.taskId);
  if (transition === undefined) return;
  expected.delete(change.taskId);
  let entry = commits.get(change.taskId);
  if (entry === undefined) commits.set(change.taskId, (entry = {}));
  entry[transition] = String(at);
});
// The same store, with the two writes whose commits are timed marked before they run.
const store = Object.create(inner);
store.answer = (id, ...rest) => {
  expected.set(id, 'working');
  return inner.answer(id, ...rest).then((result) => {
    // Nothing committed (partial answer, or not waiting): no change will come.
    if (!result.ok || !result.resumed) expected.delete(id);
    return result;
  });
};
store.finish = (id, token, outcome, ...rest) => {
  if (outcome.kind === 'completed') expected.set(id, 'completed');
  return inner.finish(id, token, outcome, ...rest);
};

const runtime = createDurableMcp({
  toolSets: [{ tools }],
  store,
  tasks: { tasksGetRate: false, maxActiveTasksPerPrincipal: 0 },
});
const handler = createHttpHandler({
  server: runtime.server,
  authenticator: createAnonymousAuthenticator(),
  origin: { allowedHosts: [...LOOPBACK_HOSTS] },
  extraRoutes: (req, res) => {
    if (req.url !== '/bench/commits' || req.method !== 'GET') return false;
    const body = JSON.stringify(Object.fromEntries(commits));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return true;
  },
});
const running = await listenHttp(handler, '127.0.0.1', 0);
console.log(`listening on ${running.url}`);
process.once('SIGTERM', () => {
  void running
    .close(1_000)
    .then(() => runtime.close(1_000))
    .then(() => process.exit(0));
});
