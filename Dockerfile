# The durable-mcp server image.
#   docker build -t durable-mcp:0.1.0 .
#   docker run --rm -p 3000:3000 durable-mcp:0.1.0            (demo tools, SQLite in /app/data: a trial)
# Production (PostgreSQL, migrations apart, the balancer's name): docs/deployment.md.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 is a native addon: npm ci takes its prebuilt binary when one matches, or compiles it with these.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
# The dependencies first, so that this layer is reused while only the sources change. npm ci runs the package's
# prepare script, which has nothing to build yet (no sources here).
COPY package.json package-lock.json ./
COPY scripts/prepare.mjs ./scripts/
RUN npm ci --no-audit --no-fund
# What `npm run build` reads: the TypeScript configs (the server's and the dashboard's), the sources (with the
# dashboard's page and browser scripts, src/admin/ui, and the stores' migrations, src/stores/*/migrations/*.sql), the
# built-in tool sets, and the steps that copy the page and the migrations.
COPY tsconfig.json tsconfig.build.json tsconfig.ui.json ./
COPY scripts/copy-ui.mjs scripts/copy-migrations.mjs ./scripts/
COPY src ./src
COPY examples ./examples
# dist/ holds the server, the dashboard, the migrations and the built-in tool sets; then only the runtime
# dependencies stay.
RUN npm run build \
    && npm prune --omit=dev --no-audit --no-fund
# better-sqlite3 is an optional dependency (npm goes on without it where it cannot be built); the image serves both
# stores, so its build stops here if the SQLite driver does not load.
RUN node -e "new (require('better-sqlite3'))(':memory:').close()"

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
# package.json stays: its "exports" let the built-in tool sets, and tool modules under /app, import 'durable-mcp'.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY LICENSE ./
# The default SQLite file (./data/tasks.db) is the only thing written; with PostgreSQL nothing is.
RUN mkdir -p /app/data && chown 1000:1000 /app/data
# The image's `node` user, numeric so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 3000
# For plain Docker; Kubernetes uses its own probes (deploy/kubernetes/durable-mcp.yaml).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:3000/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "bin/durable-mcp.js", "serve", "--host", "0.0.0.0"]
