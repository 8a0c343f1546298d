// `durable-mcp serve --help`: every flag of the server, with its default.
export const serveUsage = `durable-mcp serve [flags]
  --host HOST            bind address (default 127.0.0.1)
  --port PORT            port (default 3000; 0 picks a free one)
  --store PATH|URL       SQLite file (default ./data/tasks.db) or postgres://user@host:port/db for several replicas;
                         or DURABLE_MCP_STORE, or the file DURABLE_MCP_STORE_FILE names (keeps a password out of ps)
                         A PostgreSQL store that does not answer at start (connection refused or timed out, name
                         not found, server starting) is tried again with back-off (0.5 s doubling to 15 s) while the
                         port answers /healthz 200, /readyz and every other request 503; one that refuses (login,
                         privileges, missing migrations with --no-migrate) ends the process
  --pg-schema NAME       PostgreSQL schema (default durable_mcp)
  --pg-pool-size N       PostgreSQL connections per process (default 10)
  --pg-statement-timeout-ms N  PostgreSQL statement timeout (default 30000)
  --pg-no-prepared-statements  plain statements only (behind PgBouncer in transaction mode before 1.21)
  --no-migrate           apply no migration at start and refuse a store that lacks one (run \`durable-mcp migrate\`
                         apart, e.g. as a role with DDL rights; the server's role then needs none)
  --tools LIST           comma list of built-in sets (demo, conformance) or module paths (default demo)
  --allowed-hosts LIST   extra Host/Origin names accepted on every route but /healthz, /readyz included
                         (DNS-rebinding protection; loopback names and the bound name always are); '*' disables it
  --keep-alive-ms N      longest silence on a response: SSE keep-alive comments, and a request still running
                         after this long turns into an event stream (default 15000; 0 disables both)
  --no-legacy            do not serve 2025-11-25 clients (sessions, initialize) on the same endpoint
  --max-sessions N       live 2025-11-25 sessions per principal (default 1000; 0 disables)
  --legacy-result-wait-ms N  how long one 2025-11-25 tasks/result response stream waits before it closes for the
                         client to resume it (default 60000; at least 100)
  --max-connections N    open connections at most (default 1024); at the cap, a connection with no request in
                         flight (one that sent nothing yet, or an idle keep-alive one) is closed to make room for a
                         new one: the new one's own address's idle longest, else that of the address holding the
                         most connections; a new one is closed only when all others are busy
  --max-connections-per-source N  open connections per client address; more are closed as they arrive (default 0:
                         no cap; behind a balancer every connection is the balancer's: give --trust-proxy, or leave it)
  --trust-proxy LIST     addresses or CIDR ranges (e.g. 10.0.0.0/8) of proxies whose X-Forwarded-For names the
                         client for --max-connections-per-source (its right-most address that is not a listed proxy):
                         their connections are not counted by address, their requests in flight per client are, and
                         more get 429
  --headers-timeout-ms N time to receive a request's line and headers, counted from the connection's start (or the
                         request's first byte on a kept-alive one); then 408 and the connection closes, so a
                         connection that sends nothing holds no slot longer (default 5000; at most
                         --request-timeout-ms)
  --max-listens N        open subscriptions/listen streams per principal; more get 429 (default 100)
  --max-body-mb N        largest request body; larger get 413 (default 4, at least 1)
  --max-buffered-mb N    request bodies read at once hold at most N MiB together; more get 503 (default 64)
  --request-timeout-ms N time to receive a whole request; slower uploads get 408 (default 30000)
  --http-keep-alive-timeout-ms N  how long an idle HTTP connection stays open (default 65000: above the 60 s idle
                         time of nginx and most balancers, so that they close it first)
  --drain-ms N           on SIGTERM/SIGINT, /readyz turns 503 at once and the server keeps serving this long before
                         it stops accepting (default 0; behind a balancer, longer than its health-check interval)
  --shutdown-grace-ms N  then in-flight requests and task runs get this long before they are cut or handed back
                         (default 10000)
  --concurrency N        task runs at once in this process (default 8; 0 runs no tasks here)
  --tool-concurrency TOOL=N  at most N tasks of the task tool TOOL run at once across every replica on the store
                         (sets or overrides its task.concurrency limit; key: its own, default the tool's name;
                         repeatable)
  --lease-ms N           task lease length; heartbeats renew it every third (default 30000)
  --removed-tool-drain-ms N  tasks of a tool this server does not offer are left for other servers this long after
                         their last change, then failed (default 3600000)
  --step-max-attempts N  default attempts of every ctx.step, retries included (default 1: no retry; infinite:
                         until it succeeds or the task's TTL ends); a tool's own steps settings and each step's
                         options come first
  --step-timeout-ms N    default time bound of each step attempt (default none)
  --allow-caller-priority  honour the caller's _meta["dev.durable-mcp/priority"] (-100..100; it replaces the tool's
                         task.priority and reorders only the caller's own tasks); default: ignored
  --slot-wait-ms N       how long a call that runs within its request (a never tool, a synchronous call) waits for
                         a slot of its tool's concurrency key before it is refused server busy (default 10000)
  --stdio                serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP; when stdin ends, open
                         subscriptions end, other requests get --shutdown-grace-ms to answer, and the process exits
Clients without the tasks extension (docs/any-client.md):
  --fallback-budget-ms N how long their calls of task tools wait before handing the task back (default 20000;
                         0 hands back at once); the facade tools wait as long for news
  --fallback-required    hand back required tools too, instead of -32021 (a deliberate departure from the extension)
  --fallback-tool-prefix P  names of the facade tools: Pstatus, Prespond, Pcancel (default task_)
  --no-fallback          no hand-back and no facade: optional tools run synchronously, required ones answer -32021
Authentication (default: anonymous development mode):
  --auth FILE            static bearer tokens {"tokens":[{"token","tenant","principal"}]}, each token at least 16
                         characters; re-read on SIGHUP. An entry with "roles": ["operator"] is an operator of its
                         own tenant, or of "operatorTenants": ["t1","t2"] or "*" (all tenants, only when written)
  --jwt-issuer URL --jwks FILE|https-URL [--jwt-audience URI] [--jwt-tenant-claims tenant,tid]
                         [--jwt-principal-claim sub]   JWT access tokens; serves RFC 9728 metadata
  --jwt-operator-scope S a JWT whose scope (space-separated) or scp claim holds S is an operator's
  --jwt-operator-claim NAME=VALUE  a JWT whose claim NAME equals VALUE (or is a list holding it) is an operator's
  --jwt-operator-tenants-claim C  the operator's tenants: claim C (a tenant, a list, or "*" for all); default the
                         token's own tenant; a malformed claim grants no operator role
  --dev-operator         anonymous mode only: the anonymous caller is an operator of every tenant
                         (default: no operator; without one, operator surfaces answer 404)
  --admin-payloads       the operator API's task detail shows the task's arguments, input requests and answers and
                         result (opened with --encryption-key; {"sealed":true} where a key is missing), each read an
                         admin.payloads audit line (not with --no-audit); default: never a payload
  --max-admin-streams N  open operator event streams (/admin/api/v1/events) per operator credential; more get 429
                         (default 4)
  --max-admin-streams-total N  open operator event streams of all operators together; more get 429 (default 32)
  --resource-url URL     public URL of this endpoint (default http://HOST:PORT/mcp); the JWT audience by default
  --public-url URL       URL clients and webhook senders reach this server at (e.g. https://mcp.example.com): tools'
                         ctx.callbackUrl makes signed URLs under it (POST /callbacks/…); its host is an allowed host
Protection of stored data and limits:
  --encryption-key K     kid:base64(32 bytes)[,older keys…] encrypts task payloads at rest (or DURABLE_MCP_ENCRYPTION_KEY)
  --encrypt all|sensitive  with a key: every task (default) or only tools marked sensitive
  --tasks-get-rate N     tasks/get per second per principal, burst 2N (default 100; 0 disables)
  --max-active-tasks N   unfinished tasks per principal (default 1000; 0 disables)
  --max-stored-tasks N   tasks of any status kept per principal, finished ones until swept (default 10000; 0 disables)
  --max-active-tasks-per-tenant N, --max-stored-tasks-per-tenant N   the same caps for all principals of a
                         tenant together (default: none)
  --max-stored-bytes-per-principal N  bytes the kept tasks of a principal store (arguments, results, step values,
                         input requests and answers) until purged; a call or a step value that would pass it is
                         refused (default 1073741824; 0 disables)
  --max-steps-per-task N steps, sleeps and ctx.patched decisions one task may record; one more is refused with an
                         error naming the step (default 10000)
  --max-step-bytes N     largest step value (bytes of its JSON); a larger one fails the step for good (default
                         4194304)
  --max-result-bytes N   largest result, error, input request or status message a task stores (bytes); a larger
                         result fails the task (default 4194304)
  --max-stream-chunks-per-task N  chunks the streams of one task hold together (ctx.stream); one more append is
                         refused with an error naming the stream (default 10000)
  --max-stream-bytes-per-task N  bytes of text the streams of one task hold together (default 16777216)
  --no-audit             no audit lines (default: one JSON line per task access on stderr)
Observability:
  --log-level LEVEL      trace|debug|info|warn|error (default info); JSON lines on stderr (pino)
  --no-metrics           do not serve Prometheus metrics at GET /metrics
  --metrics-port PORT    serve /metrics (and /healthz, /readyz) on this port instead of the MCP port, which then
                         answers 404 for /metrics (0 picks a free one, printed as "metrics on URL")
  --metrics-host HOST    bind address of --metrics-port (default: --host)
  --metrics-allowed-hosts LIST  Host/Origin names --metrics-port accepts on /metrics and /readyz besides loopback
                         names, its bound name and any IP address (probes and scrapes by pod IP need no entry)
  --metrics-token T      /metrics needs Authorization: Bearer T, else 401 (or DURABLE_MCP_METRICS_TOKEN; at least
                         16 characters)
  --metrics-stats-interval-ms N  read the task counts (by status, backlog) from the store at most once per N ms;
                         scrapes in between show the last counts (default 5000; 0 reads on every scrape)
  --otel                 emit OpenTelemetry spans (register an SDK, e.g. node --import your-otel-setup.js)
Environment: DURABLE_MCP_STATE_SECRET seals MRTR requestState (default: a secret kept in the store).`;
