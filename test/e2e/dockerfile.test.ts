// The image the Dockerfile builds, without Docker (neither an engine nor the base image's registry is reachable in
// CI): the build stage replayed in a folder from exactly what its COPY lines bring from the context (minus
// .dockerignore), its RUN lines run as written but for those in NOT_RUN and `npm ci`; then the runtime stage
// assembled in another folder from its COPY lines and started as its CMD says, and asked for /healthz and a tool.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope, mcpHeaders, startListening, type ServeProcess } from '../support/cli.js';
import {
  copyFromContext,
  dockerignore,
  parseCopy,
  parseDockerfile,
  type Stage,
} from '../support/dockerfile.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The stages' WORKDIR: each stage's folder stands for it. */
const APP = '/app';
/** RUN lines that change the image's system, not the files under /app: not run here. */
const NOT_RUN = [
  /^apt-get update /, // the compiler for better-sqlite3: the node_modules standing for npm ci holds it built
  /^mkdir -p \/app\/data && chown /, // the data folder's owner (the server creates ./data itself)
];
/** The image's commands see no variables of this test run (npm's, NODE_ENV), only their stage's ENV. */
const BASE_ENV = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(npm_|NODE_ENV$|VITEST)/i.test(name)),
);

const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const ignored = dockerignore(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));

/** A path of the image (absolute, or relative to the WORKDIR) in the folder that stands for its stage. */
function inStage(dir: string, path: string): string {
  const abs = posix.resolve(APP, path);
  if (abs !== APP && !abs.startsWith(`${APP}/`)) throw new Error(`${path} is outside ${APP}`);
  return join(dir, abs.slice(APP.length));
}

function sh(command: string, cwd: string, env: Record<string, string>): void {
  try {
    execFileSync('sh', ['-c', command], {
      cwd,
      env: { ...BASE_ENV, ...env },
      encoding: 'utf8',
      stdio: 'pipe',
    });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`RUN ${command} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

function run(command: string, dir: string, env: Record<string, string>): void {
  if (NOT_RUN.some((re) => re.test(command))) return;
  if (/^npm ci( |$)/.test(command)) {
    // npm ci installs the lockfile's packages: the repository's node_modules, installed from the same
    // package-lock.json, stands for them (copied: npm prune removes from it). A real npm ci would need the registry,
    // and compiles better-sqlite3 (over a minute) when no prebuilt binary can be downloaded. Then, as npm ci does,
    // the package's prepare script.
    execFileSync('cp', ['-a', join(ROOT, 'node_modules'), join(dir, 'node_modules')]);
    sh('npm run prepare --if-present', dir, env);
    return;
  }
  sh(command, dir, env);
}

/** A COPY --from: a folder's contents or a file, from the folder of the stage named. */
function copyFromStage(fromDir: string, source: string, dest: string, intoFolder: boolean): void {
  const from = inStage(fromDir, source);
  const to = statSync(from).isFile() && intoFolder ? join(dest, basename(from)) : dest;
  mkdirSync(dirname(to), { recursive: true });
  cpSync(from, to, { recursive: true, verbatimSymlinks: true });
}

/** Replays a stage's instructions in `dir`; returns its ENV and CMD. */
function replay(
  stage: Stage,
  dir: string,
  dirs: Map<string, string>,
): { env: Record<string, string>; cmd: string[] } {
  const env: Record<string, string> = {};
  let cmd: string[] = [];
  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') expect(args).toBe(APP);
    else if (keyword === 'ENV') {
      const [name, value] = args.split('=') as [string, string];
      env[name] = value;
    } else if (keyword === 'COPY') {
      const copy = parseCopy(args);
      const fromDir = copy.from === undefined ? undefined : dirs.get(copy.from);
      if (copy.from !== undefined && fromDir === undefined) throw new Error(`no stage ${copy.from}`);
      if (fromDir === undefined) copyFromContext(ROOT, ignored, copy, inStage(dir, copy.dest));
      else {
        const intoFolder = copy.dest.endsWith('/') || copy.sources.length > 1;
        for (const s of copy.sources) copyFromStage(fromDir, s, inStage(dir, copy.dest), intoFolder);
      }
    } else if (keyword === 'RUN') run(args, dir, env);
    else if (keyword === 'CMD') cmd = JSON.parse(args) as string[];
    else if (!['USER', 'EXPOSE', 'HEALTHCHECK'].includes(keyword))
      throw new Error(`${keyword} is not replayed`);
  }
  return { env, cmd };
}

let work: string;
let image: string;
let server: ServeProcess | undefined;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'durable-mcp-image-'));
  const dirs = new Map<string, string>();
  const [build, runtime] = stages;
  expect(stages).toHaveLength(2);
  expect(build?.name).toBe('build');
  dirs.set('build', join(work, 'build'));
  mkdirSync(join(work, 'build'));
  replay(build as Stage, join(work, 'build'), dirs);
  image = join(work, 'image');
  mkdirSync(image);
  const { env, cmd } = replay(runtime as Stage, image, dirs);
  // The CMD, on a loopback address and a free port.
  expect(cmd.slice(0, 5)).toEqual(['node', 'bin/durable-mcp.js', 'serve', '--host', '0.0.0.0']);
  const args = [...cmd.slice(1, 4), '127.0.0.1', ...cmd.slice(5), '--port', '0'];
  server = await startListening(args, { cwd: image, env, timeoutMs: 30_000 });
}, 240_000);

afterAll(async () => {
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, 120_000);

describe('the image the Dockerfile builds', () => {
  it('is built from the context .dockerignore leaves, read as docker build reads it', () => {
    const leftOut = dockerignore('# a comment\nscripts\n!scripts/keep.mjs\n*.db\n**/*.log\n/dist/\n');
    const paths = ['scripts/a.mjs', 'scripts/chaos/b.ts', 'x.db', 'a/b/c.log', 'dist/src/x.js'];
    expect(paths.filter(leftOut)).toEqual(paths);
    // `*.db` is a name at the root only; the last pattern matching a path or a parent folder decides.
    expect(['scripts/keep.mjs', 'data/x.db', 'src/index.ts'].filter(leftOut)).toEqual([]);
  });

  it('holds the built server, its dashboard and the runtime dependencies only', () => {
    for (const path of ['package.json', 'bin/durable-mcp.js', 'dist/src/index.js', 'LICENSE'])
      expect(existsSync(join(image, path)), path).toBe(true);
    for (const name of ['index.html', 'dashboard.css', 'app.js'])
      expect(existsSync(join(image, 'dist/src/admin/ui', name)), name).toBe(true);
    // Both stores: the SQLite driver, an optional dependency, is checked to load in the build stage.
    for (const name of ['better-sqlite3', 'pg'])
      expect(existsSync(join(image, 'node_modules', name)), name).toBe(true);
    const checks = stages[0]?.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(checks?.some((args) => args.includes("require('better-sqlite3')"))).toBe(true);
    expect(existsSync(join(image, 'node_modules/typescript')), 'devDependencies pruned').toBe(false);
    expect(existsSync(join(image, 'src')), 'no sources').toBe(false);
  });

  it('starts as its CMD says, answers /healthz and a tool call, and writes its SQLite file under ./data', async () => {
    const origin = server?.origin as string;
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    const res = await fetch(server?.url as string, {
      method: 'POST',
      headers: mcpHeaders('tools/call', 'echo'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'from the image' }, _meta: envelope() },
      }),
    });
    expect(await res.json()).toMatchObject({
      result: { resultType: 'complete', content: [{ type: 'text', text: 'from the image' }] },
    });
    expect(existsSync(join(image, 'data/tasks.db'))).toBe(true);
  });
});
